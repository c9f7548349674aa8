package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/examples/market"
)

// bin is the sandcall binary built once by TestMain; the tests run it as a
// user or an MCP client would.
var bin string

func TestMain(m *testing.M) {
	// The red-team test's canary, set once for the whole binary rather than
	// with t.Setenv, which forbids running in parallel.
	os.Setenv("SANDCALL_TEST_SECRET", canary)
	// The tests run the binary and mostly wait on its processes (runs
	// ending at their deadline, servers starting, npm servers answering):
	// run more of them at a time than the default of one per CPU, unless
	// -parallel says how many.
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", strconv.Itoa(max(4, runtime.GOMAXPROCS(0))))
	}
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sandcall-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "sandcall")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building sandcall: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

const summarySHA256 = "ced1ffb502f5a3b35468831e1b0cdef8f4aa4595953c23304d30e28b5555c250"

// sandcall runs the binary to completion with stdin and returns its output
// and exit code.
func sandcall(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return sandcallWithin(t, 5*time.Minute, stdin, args...)
}

// sandcallWithin is sandcall with a hang guard of d.
func sandcallWithin(t *testing.T, d time.Duration, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("sandcall %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return o.String(), e.String(), code
}

func writeProgram(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "program.js")
	if err := os.WriteFile(p, []byte(expense.Program), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkRun checks a run_code result carrying the expense program's answer.
func checkRun(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("run_code failed: %v", res.StructuredContent)
	}
	var r struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Calls  struct {
			Total int `json:"total"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &r); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(r.Result)
	if !r.OK || r.Calls.Total != 56 || hex.EncodeToString(sum[:]) != summarySHA256 {
		t.Fatalf("run = ok %v, %d calls, result %s", r.OK, r.Calls.Total, r.Result)
	}
}

func TestServeStdio(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(bin, "serve", "--demo", "--log-level", "debug")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	t.Cleanup(func() { kill(cmd) })
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if tl.OutputSchema == nil {
			t.Errorf("%s has no output schema", tl.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"describe_tools", "get_budget_by_level", "get_expenses", "get_financials", "get_price_history", "get_stock_snapshot",
		"get_team_members", "ping", "read_output", "run_code", "search_competitors", "search_news", "search_tools"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": expense.Program}})
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, res)
	// A program that floods the console cannot reach the protocol stream.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"code": `for (let i = 0; i < 100; i++) console.log("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"); return "still fine"`}})
	if err != nil || res.IsError {
		t.Fatalf("console flood: %v %v", err, res)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping after console flood: %v", err)
	}
	// Debug logs went to stderr, not into the protocol stream.
	if !strings.Contains(stderr.String(), "level=") {
		t.Errorf("expected debug logs on stderr, got %q", stderr.String())
	}
}

// startHTTP starts `sandcall serve --http 127.0.0.1:0 args...` and returns
// the URL it prints.
func startHTTP(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kill(cmd) })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	re := regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+/mcp)$`)
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("sandcall serve exited before listening")
			}
			if m := re.FindStringSubmatch(l); m != nil {
				go func() { // keep draining stderr
					for range lines {
					}
				}()
				return m[1], cmd
			}
		case <-timeout:
			t.Fatal("no 'listening on' line")
		}
	}
}

func TestServeHTTP(t *testing.T) {
	t.Parallel()
	url, cmd := startHTTP(t, "--demo")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": expense.Program}})
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, res)
	cs.Close()

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	post := func(body string, mutate func(*http.Request)) int {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if mutate != nil {
			mutate(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(init, nil); got != http.StatusOK {
		t.Fatalf("plain initialize: %d", got)
	}
	if got := post(init, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }); got != http.StatusForbidden {
		t.Errorf("bad Origin: %d, want 403", got)
	}
	if got := post(init, func(r *http.Request) { r.Host = "evil.example" }); got != http.StatusForbidden {
		t.Errorf("bad Host: %d, want 403", got)
	}
	big := init[:len(init)-1] + `,"pad":"` + strings.Repeat("x", 23<<20) + `"}`
	if got := post(big, nil); got != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d, want 413", got)
	}

	// SIGTERM stops the server cleanly.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}

func TestServeRefusesRemote(t *testing.T) {
	t.Parallel()
	_, stderr, code := sandcall(t, "", "serve", "--http", "0.0.0.0:0")
	if code != 2 || !strings.Contains(stderr, "--allow-remote") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = sandcall(t, "", "serve", "--isolation", "vm")
	if code != 2 || !strings.Contains(stderr, "--isolation") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	prog := writeProgram(t)
	check := func(stdout string) {
		t.Helper()
		var r struct {
			OK     bool            `json:"ok"`
			Result json.RawMessage `json:"result"`
			Calls  struct {
				Total  int            `json:"total"`
				ByTool map[string]int `json:"by_tool"`
			} `json:"calls"`
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("--json output %q: %v", stdout, err)
		}
		sum := sha256.Sum256(r.Result)
		if !r.OK || r.Calls.Total != 56 || r.Calls.ByTool["get_expenses"] != 50 || r.RunID == "" || hex.EncodeToString(sum[:]) != summarySHA256 {
			t.Fatalf("run = %+v", r)
		}
	}
	t.Run("file", func(t *testing.T) {
		stdout, stderr, code := sandcall(t, "", "run", "--demo", "--json", prog)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		check(stdout)
	})
	t.Run("stdin, flags after the file", func(t *testing.T) {
		stdout, stderr, code := sandcall(t, expense.Program, "run", "-", "--demo", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		check(stdout)
	})
	t.Run("pretty result and logs", func(t *testing.T) {
		stdout, stderr, code := sandcall(t, `console.log("hello", input.x); return {b: 1, a: [input.x]}`, "run", "--input", `{"x": 2}`, "-")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if want := "{\n  \"b\": 1,\n  \"a\": [\n    2\n  ]\n}\n"; stdout != want {
			t.Fatalf("stdout %q, want %q", stdout, want)
		}
		if !strings.Contains(stderr, "hello 2") {
			t.Fatalf("stderr %q lacks the log line", stderr)
		}
	})
	t.Run("program error", func(t *testing.T) {
		stdout, stderr, code := sandcall(t, `return await tools.get_budget_by_level({level: "L9"})`, "run", "--demo", "-")
		if code != 1 || stdout != "" {
			t.Fatalf("exit %d, stdout %q", code, stdout)
		}
		if !regexp.MustCompile(`(?m)^E_TOOL_ARGS: .+\nhint: .+`).MatchString(stderr) {
			t.Fatalf("stderr %q", stderr)
		}
	})
	t.Run("program error as json", func(t *testing.T) {
		stdout, _, code := sandcall(t, `throw new Error("boom")`, "run", "--json", "-")
		var r struct {
			OK    bool `json:"ok"`
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if code != 1 || json.Unmarshal([]byte(stdout), &r) != nil || r.OK || r.Error.Code != "E_GUEST_ERROR" {
			t.Fatalf("exit %d, stdout %q", code, stdout)
		}
	})
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no file", []string{"run"}},
		{"two files", []string{"run", "a.js", "b.js"}},
		{"missing file", []string{"run", filepath.Join(t.TempDir(), "nope.js")}},
		{"bad input", []string{"run", "--input", "{", "-"}},
		{"unknown flag", []string{"run", "--frobnicate", "-"}},
		{"unknown language", []string{"run", "--lang", "cobol", "-"}},
		{"bad timeout", []string{"run", "--timeout", "5m", "-"}},
	} {
		t.Run("usage: "+c.name, func(t *testing.T) {
			_, stderr, code := sandcall(t, "return 1", c.args...)
			if code != 2 || stderr == "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
		})
	}
}

func TestDemo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"demo"}, {"demo", "expense"}} {
		stdout, stderr, code := sandcall(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		rows := regexp.MustCompile(`(?m)^\s*ENG-\d{3}\s`).FindAllString(stdout, -1)
		if len(rows) != 16 {
			t.Fatalf("%d rows, want 16:\n%s", len(rows), stdout)
		}
		// Measured by the run itself; these are the workload's published numbers.
		for _, want := range []string{"56 raw tool results", "313,263 bytes", "374,579 pretty-printed", "1,791", "175× counting the result alone"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("demo output lacks %q:\n%s", want, stdout)
			}
		}
		prog := fmt.Sprintf("(%s + 1,791)", comma(int64(len(expense.Program))))
		if !strings.Contains(stdout, prog) {
			t.Errorf("demo output lacks the program size %s:\n%s", prog, stdout)
		}
	}
	_, stderr, code := sandcall(t, "", "demo", "bogus")
	if code != 2 || !strings.Contains(stderr, "want expense, market or inbox") {
		t.Fatalf("demo bogus: exit %d, %q", code, stderr)
	}
}

// `sandcall demo market`: the report's rows, movers and unavailable ticker
// as computed in Go from the dataset, and the context accounting measured by
// the run against a one-call-per-turn agent's.
func TestDemoMarket(t *testing.T) {
	t.Parallel()
	list := market.Watchlist()
	ref := market.Reference(list)
	direct, err := market.MeasureDirect(context.Background(), market.Tools(market.Options{}), list)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"demo", "market"}, {"demo", "--isolation", "inprocess", "market"}} {
		stdout, stderr, code := sandcall(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		for _, r := range ref.Rows {
			row := fmt.Sprintf(`(?m)^\s*%s\s+%s\s+%s\s+%.1f\s+%.1f\s+%s$`, regexp.QuoteMeta(r.Ticker), regexp.QuoteMeta(money(r.Price)),
				regexp.QuoteMeta(fmt.Sprintf("%+.2f", r.ChgPct)), *r.RetPct, *r.VolPct, regexp.QuoteMeta(*r.Headline))
			if !regexp.MustCompile(row).MatchString(stdout) {
				t.Errorf("%v: no row %s:\n%s", args, row, stdout)
			}
		}
		for _, m := range ref.Movers {
			if want := fmt.Sprintf("%+6.2f%%  peers: %s", m.ChgPct, strings.Join(m.Peers, ", ")); !strings.Contains(stdout, want) {
				t.Errorf("%v: no mover %s %q", args, m.Ticker, want)
			}
		}
		for _, want := range []string{"Unavailable:\n  ACME   E_TOOL_FAILED: no current price for ACME", "The program made 63 tool calls",
			fmt.Sprintf("%d raw tool results", direct.Calls),
			fmt.Sprintf("a one-call-per-turn agent would have read %s bytes of raw results; this program returned %s bytes",
				comma(int64(direct.Bytes)), comma(int64(len(market.ReferenceJSON(list)))))} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, stdout)
			}
		}
		// The demo's flaky tool failed and the broker retried: the retry path ran.
		if m := regexp.MustCompile(`Transient tool failures: (\d+) .* the broker retried (\d+);`).FindStringSubmatch(stdout); m == nil || m[1] == "0" || m[2] == "0" {
			t.Errorf("%v: no transient failure retried: %q", args, m)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	stdout, _, code := sandcall(t, "", "version")
	if code != 0 || !regexp.MustCompile(`^sandcall 0\.1\.0-dev \(go1\.[0-9.]+.*\)\n$`).MatchString(stdout) {
		t.Fatalf("version: exit %d, %q", code, stdout)
	}
	for _, args := range [][]string{{"--help"}, {"help"}, {"serve", "--help"}, {"run", "-h"}, {"demo", "--help"}, {"help", "run"}} {
		stdout, _, code := sandcall(t, "", args...)
		if code != 0 || !strings.Contains(stdout, "sandcall") || !strings.Contains(stdout, "Example") {
			t.Errorf("%v: exit %d, %q", args, code, stdout)
		}
	}
	for _, args := range [][]string{{}, {"bogus"}, {"tools"}} {
		_, stderr, code := sandcall(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "Usage") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}

// TestBench checks the shape of `sandcall bench --json` (DESIGN.md §8) on
// one run of each workload; the figures themselves are for people to read.
// Every row's run was checked by bench against the workload's result.
func TestBench(t *testing.T) {
	// Parallel: it spends most of its time waiting on a subprocess; the
	// package's parallel tests run together after the others.
	t.Parallel()
	// Every workload, each in a fresh process: minutes on a loaded machine.
	stdout, stderr, code := sandcallWithin(t, 15*time.Minute, "", "bench", "--json", "--runs", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		for _, k := range []string{"workload", "tier", "runs", "median_ms", "min_ms", "max_ms", "calls_per_s"} {
			if _, ok := r[k]; !ok {
				t.Errorf("row %v lacks %q", r, k)
			}
		}
		seen[fmt.Sprint(r["workload"], "/", r["tier"])] = true
		if r["workload"] == "expense" && r["tier"] == "process" && (r["server_cpu_ms"] == nil || r["worker_cpu_ms"] == nil) {
			t.Errorf("expense/process lacks the CPU per run: %v", r)
		}
		if r["workload"] == "burst" && r["runs"] != float64(64) {
			t.Errorf("burst: %v runs, want 64", r["runs"])
		}
	}
	for _, want := range []string{"expense/inprocess", "expense-cold/inprocess", "fanout/inprocess", "first-run/inprocess",
		"expense/process", "fanout/process", "first-run/process", "deadline-1s/inprocess", "deadline-1s/process",
		"market/inprocess", "market/process",
		// 64 concurrent expense runs through serve --http, all exact; a
		// fresh `sandcall run` of return 1.
		"burst/process", "first-run-return1/inprocess", "first-run-return1/process",
		// WebAssembly: the Go guest (built by bench with the installed Go, which
		// built this binary) and the WAT fan-out.
		"expense-wasm/inprocess", "fanout-wasm/inprocess", "expense-wasm/process", "fanout-wasm/process"} {
		if !seen[want] {
			t.Errorf("no row for %s", want)
		}
	}
}

// kill ends a child process if it still runs, and reaps it.
func kill(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Kill()
	if cmd.ProcessState == nil {
		_ = cmd.Wait()
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
