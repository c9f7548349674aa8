package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fanoutCalls is how many parallel get-sum calls one round makes.
const fanoutCalls = 100

// fanoutProgram makes fanoutCalls parallel calls of the everything
// server's get-sum and checks every answer.
var fanoutProgram = `const r = await Promise.all(Array.from({length: ` + strconv.Itoa(fanoutCalls) + `}, (_, i) => tools.everything_get_sum({a: i, b: 1})));
let ok = 0;
for (let i = 0; i < r.length; i++) if (String(r[i]).includes("is " + (i + 1) + ".")) ok++;
return ok`

// TestMeasureRealFanout prints how long fanoutCalls parallel calls of the
// npm everything server's get-sum take through run_code (sandcall serve
// over stdio, each tier) against a go-sdk client calling the server
// directly, interleaved round by round; medians and ratios. It asserts
// only the results (timings are noisy on a shared machine) and runs only
// with SANDCALL_MEASURE=1. SANDCALL_MEASURE_ROUNDS sets the rounds (30);
// SANDCALL_MEASURE_BIN adds another sandcall binary to compare, measured in
// the same rounds.
func TestMeasureRealFanout(t *testing.T) {
	if os.Getenv("SANDCALL_MEASURE") == "" {
		t.Skip("set SANDCALL_MEASURE=1 to measure")
	}
	rounds := 30
	if n, err := strconv.Atoi(os.Getenv("SANDCALL_MEASURE_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	dir := everythingProject(t)
	bins := installNPMServers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()

	type subject struct {
		name string
		call func() error
		ds   []time.Duration
		pid  int // the serve process, if any
	}
	var subjects []*subject

	// Direct: the go-sdk client on the server itself.
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "measure", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command(filepath.Join(bins, "mcp-server-everything"))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	subjects = append(subjects, &subject{name: "direct", call: func() error {
		var wg sync.WaitGroup
		errs := make([]error, fanoutCalls)
		for i := range fanoutCalls {
			wg.Go(func() {
				res, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": i, "b": 1}})
				switch {
				case err != nil:
					errs[i] = err
				case res.IsError || !strings.Contains(string(textOf(res)), fmt.Sprintf("is %d.", i+1)):
					errs[i] = fmt.Errorf("get-sum %d: %s", i, textOf(res))
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}})

	binaries := []string{bin}
	if b := os.Getenv("SANDCALL_MEASURE_BIN"); b != "" {
		binaries = append(binaries, b)
	}
	for bi, b := range binaries {
		for _, tier := range []string{"inprocess", "process"} {
			cmd := exec.Command(b, "serve", "--trust-project", "--isolation", tier)
			cmd.Dir = dir
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "measure", Version: "1"}, nil).
				Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			name := "run_code/" + tier
			if bi > 0 {
				name += "/" + filepath.Base(b)
			}
			subjects = append(subjects, &subject{name: name, pid: cmd.Process.Pid, call: func() error {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": fanoutProgram}})
				if err != nil {
					return err
				}
				var out struct {
					Result json.RawMessage `json:"result"`
				}
				if res.IsError || json.Unmarshal(textOf(res), &out) != nil || string(out.Result) != strconv.Itoa(fanoutCalls) {
					return fmt.Errorf("%s: %.300s", name, textOf(res))
				}
				return nil
			}})
			// The upstream attaches in the background: wait until the
			// program's calls go through.
			deadline := time.Now().Add(2 * time.Minute)
			for err := subjects[len(subjects)-1].call(); err != nil; err = subjects[len(subjects)-1].call() {
				if time.Now().After(deadline) {
					t.Fatalf("%s never succeeded: %v", name, err)
				}
				time.Sleep(200 * time.Millisecond) // polling an external server's attach, not synchronizing goroutines
			}
		}
	}
	for i := range rounds + 3 {
		for _, s := range subjects {
			t0 := time.Now()
			if err := s.call(); err != nil {
				t.Fatal(err)
			}
			if i >= 3 { // warm-ups
				s.ds = append(s.ds, time.Since(t0))
			}
		}
	}
	base := median(subjects[0].ds)
	for _, s := range subjects {
		m := median(s.ds)
		rss := ""
		if s.pid > 0 {
			rss = fmt.Sprintf("  serve peak RSS %.1f MB", float64(procStatusKB(s.pid, "VmHWM:"))/1024)
		}
		t.Logf("%-32s median %7.2f ms  min %7.2f ms  %.2fx direct (%d rounds of %d parallel get-sum)%s",
			s.name, ms(m), ms(minDuration(s.ds)), float64(m)/float64(base), len(s.ds), fanoutCalls, rss)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func minDuration(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

// procStatusKB reads a "kB" field of /proc/PID/status (0 if unknown).
func procStatusKB(pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb
		}
	}
	return 0
}

// TestMeasureRealFanoutTS is TestMeasureRealFanout with the official
// TypeScript SDK as the client of both subjects (testdata/measure_fanout.mjs):
// the previous rounds' harness, whose client is faster than go-sdk's at the
// direct calls. It runs only with SANDCALL_MEASURE=1 and asserts only the
// results.
func TestMeasureRealFanoutTS(t *testing.T) {
	if os.Getenv("SANDCALL_MEASURE") == "" {
		t.Skip("set SANDCALL_MEASURE=1 to measure")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: node is not installed")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("skipped: npm is not installed")
	}
	rounds := 30
	if n, err := strconv.Atoi(os.Getenv("SANDCALL_MEASURE_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	dir := everythingProject(t)
	bins := installNPMServers(t)
	sdk := installTSSDK(t, npm)
	script, err := os.ReadFile(filepath.Join("testdata", "measure_fanout.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	// The script runs from the SDK's install dir so that node resolves it.
	path := filepath.Join(sdk, "measure_fanout.mjs")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, path, filepath.Join(bins, "mcp-server-everything"), bin, dir,
		strconv.Itoa(rounds), strconv.Itoa(fanoutCalls))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var rows []struct {
		Name     string  `json:"name"`
		MedianMS float64 `json:"median_ms"`
		MinMS    float64 `json:"min_ms"`
		Rounds   int     `json:"rounds"`
	}
	if err := json.Unmarshal(out, &rows); err != nil || len(rows) == 0 {
		t.Fatalf("script output %q: %v", out, err)
	}
	for _, r := range rows {
		t.Logf("%-36s median %7.2f ms  min %7.2f ms  %.2fx direct (%d rounds of %d parallel get-sum)",
			r.Name, r.MedianMS, r.MinMS, r.MedianMS/rows[0].MedianMS, r.Rounds, fanoutCalls)
	}
}
