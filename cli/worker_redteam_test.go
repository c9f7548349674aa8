package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/confine"
	"github.com/sandcall/sandcall/sandbox/process"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
	"github.com/sandcall/sandcall/tools"
)

// hostile is one hostile program and what it must get.
type hostile struct {
	name, src string
	ts        bool     // src is TypeScript
	module    []byte   // a WebAssembly module instead of src
	expect    []string // codes, "ok:<compact JSON>", or "ok" for any result
}

// loadHostileWasm reads the shared sample's modules and their expected
// codes from the table in its README ("| w01_loop | E_TIMEOUT |").
func loadHostileWasm(t *testing.T, dir string) []hostile {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	codeRE := regexp.MustCompile(`E_[A-Z_]+`)
	var hs []hostile
	for _, line := range strings.Split(string(readme), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "w") {
			continue
		}
		name, want := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		mod, err := os.ReadFile(filepath.Join(dir, "wasm", name+".wasm"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		exp := codeRE.FindAllString(want, -1)
		if strings.HasPrefix(want, "ok") {
			exp = append(exp, "ok")
		}
		hs = append(hs, hostile{name: "shared/wasm/" + name, module: mod, expect: exp})
	}
	if len(hs) == 0 {
		t.Fatal("no wasm cases found in the shared README")
	}
	return hs
}

// loadHostile reads programs whose first line is "// expect: A|B|ok:V":
// JavaScript (*.js) and TypeScript (*.ts).
func loadHostile(t *testing.T, dir, prefix string) []hostile {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.js"))
	if err != nil {
		t.Fatal(err)
	}
	tsFiles, _ := filepath.Glob(filepath.Join(dir, "*.ts"))
	files = append(files, tsFiles...)
	sort.Strings(files)
	var hs []hostile
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		exp, ok := strings.CutPrefix(first, "// expect: ")
		if !ok {
			t.Fatalf("%s: first line must be // expect: …", f)
		}
		exp, _, _ = strings.Cut(exp, "   ") // the shared sample adds notes after spaces
		hs = append(hs, hostile{name: prefix + strings.TrimSuffix(filepath.Base(f), ".js"), src: string(b), ts: strings.HasSuffix(f, ".ts"),
			expect: strings.Split(strings.TrimSpace(exp), "|")})
	}
	return hs
}

// TestRedteamProcessTier runs every hostile program of the project's suite
// (testdata/redteam, one or more per hostile class)
// and the shared sample, when present, through real worker processes of the
// real binary with every confinement layer this machine supports. None is
// skipped. After each case the server still answers, no secret of its
// environment shows anywhere, and at the end its goroutines and heap are
// back to baseline.
//
// It runs twice: with one job per worker, and with workers reused within
// the principal (the default), where every case runs in a worker that
// served the cases before it unless one of them ended abnormally.
func TestRedteamProcessTier(t *testing.T) {
	// Not parallel: the goroutine and heap checks after the cases count the
	// whole test process, so nothing else may run in it meanwhile; the cases
	// run redteamConcurrency at a time instead.
	if testing.Short() {
		t.Skip("-short: the memory bombs take seconds each")
	}
	for _, reuse := range []int{1, defaultWorkerReuse} {
		t.Run(fmt.Sprintf("reuse=%d", reuse), func(t *testing.T) { redteamProcessTier(t, reuse) })
	}
}

// canary is a secret in this process's environment (set by TestMain: a
// server's environment holds secrets); it must show nowhere.
const canary = "sk-canary-7f3a9c1e5b"

func redteamProcessTier(t *testing.T, reuse int) {
	// Workers of a user namespace run as nobody: the binary's directory
	// must be searchable.
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	// Each case gets one of two deadlines (see deadline below); the workers
	// allow the longer.
	limits := sandbox.Limits{Timeout: hangDeadline}.Resolve()
	args := workerArgs(limits, true, reuse)
	rep := confine.Probe(confine.Config{WorkerArgs: args, Executable: bin})
	t.Logf("tier: %s", rep.Tier())

	var logs, audit sandboxtest.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	pool, err := process.New(process.Config{
		Command: append([]string{bin}, args...),
		Size:    redteamConcurrency,
		Reuse:   reuse,
		// Cases run several at a time and memory bombs kill their workers:
		// on a loaded machine a refill took over the 5 s default queue wait
		// (E_BUSY). Waiting does not count against a run's deadline.
		QueueTimeout: 2 * time.Minute,
		MemoryBytes:  limits.MemoryBytes,
		SysProcAttr:  rep.SysProcAttr(),
		Env:          append(rep.Environ(), "GOGC=off"),
		Logger:       log,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	cat, _ := tools.NewCatalog(demo.Tools()...)
	broker, _ := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat, Logger: log,
		Audit: slog.New(slog.NewJSONHandler(&audit, nil))})
	if err := bindings.AddDiscovery(broker); err != nil { // tools.$search, tools.$describe
		t.Fatal(err)
	}
	runner, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: pool, Limits: limits, Tier: rep.Tier(),
		Languages: []sandbox.Language{sandbox.JavaScript, sandbox.TypeScript, sandbox.WASM}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// Warm up, then take the baseline.
	if res := runner.Run(ctx, bindings.RunRequest{Program: sandbox.Program{Source: "return 1"}}); !res.OK {
		t.Fatalf("warm-up: %v", res.Error)
	}
	baseG, baseHeap := settle(pool)
	baseIdle := pool.Idle()

	cases := loadHostile(t, "testdata/redteam", "")
	if shared := "../../shared/redteam/js"; dirExists(shared) {
		cases = append(cases, loadHostile(t, shared, "shared/")...)
		cases = append(cases, loadHostileWasm(t, "../../shared/redteam")...)
	} else {
		t.Log("../shared/redteam not found: running the project's own cases only")
	}
	// The cases run redteamConcurrency at a time, one per warm worker: most
	// of the suite's time is cases waiting for their deadline, so this is
	// not bounded by -parallel (t.Run from several goroutines; subtests
	// calling t.Parallel would be). The group returns when all have ended,
	// before the baseline is compared.
	t.Run("case", func(t *testing.T) {
		sem := make(chan struct{}, redteamConcurrency)
		var wg sync.WaitGroup
		for _, c := range cases {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				t.Run(c.name, func(t *testing.T) { runHostile(t, runner, broker, c, rep.Tier(), canary) })
			}()
		}
		wg.Wait()
	})

	g, heap := settle(pool)
	// Each worker the pool holds has goroutines of its own in the server
	// (its reaper, its frame writer, its stderr copy).
	if g > baseG+2+3*max(0, pool.Idle()-baseIdle) {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d after the suite, %d before\n%s", g, baseG, buf[:runtime.Stack(buf, true)])
	}
	if heap > baseHeap+32<<20 {
		t.Errorf("heap in use: %d MiB after the suite, %d MiB before", heap>>20, baseHeap>>20)
	}
	for name, b := range map[string]string{"logs": logs.String(), "audit": audit.String()} {
		if strings.Contains(b, canary) {
			t.Errorf("the canary secret leaked into the server's %s", name)
		}
	}
	if !strings.Contains(audit.String(), `"tier":"`+rep.Tier()+`"`) {
		t.Errorf("audit run records do not name the tier")
	}
}

// The two deadlines of the red-team cases. A case whose expected endings
// include E_TIMEOUT gets the short one: it ends there or at one of the
// others listed. Every other case gets the long one, a hang guard only, so
// that the limit the case is about (memory, output, stack, …) is the only
// one that can trip: with a short deadline, a memory bomb on 2 loaded
// cores ended at the deadline first (E_TIMEOUT for E_MEMORY), a race the
// test must not depend on.
const (
	timeoutDeadline = 3 * time.Second
	hangDeadline    = sandbox.MaxTimeout
)

// redteamConcurrency is how many cases run at a time (and the pool's
// size): a fifth of the cases spin until their 3 s deadline.
const redteamConcurrency = 4

func deadline(expect []string) time.Duration {
	if slices.Contains(expect, string(sandbox.ETimeout)) {
		return timeoutDeadline
	}
	return hangDeadline
}

// runHostile runs one hostile case and checks its ending, the tier, that
// nothing leaks, and that the server still answers.
func runHostile(t *testing.T, runner *bindings.Runner, broker *bindings.Broker, c hostile, tier, canary string) {
	ctx := context.Background()
	start := time.Now()
	prog := sandbox.Program{Source: c.src}
	if c.ts {
		prog.Language = sandbox.TypeScript
	}
	if c.module != nil {
		prog = sandbox.Program{Language: sandbox.WASM, Module: c.module}
	}
	res := runner.Run(ctx, bindings.RunRequest{Program: prog, Limits: sandbox.Limits{Timeout: deadline(c.expect)}})
	took := time.Since(start)
	got := "ok:" + string(res.Result)
	if !res.OK {
		got = string(res.Error.Code)
	}
	if !matches(got, c.expect) {
		t.Errorf("got %s (%v), want %s", sandbox.Cap(got, 200), res.Error, strings.Join(c.expect, "|"))
	}
	if res.Tier != tier {
		t.Errorf("tier %q, want %q", res.Tier, tier)
	}
	// A hang check, not a speed assertion: every case ends soon after
	// its deadline (plus a wait for a worker: memory bombs kill theirs).
	if d := deadline(c.expect); took > d+2*time.Minute {
		t.Errorf("took %s for a %s deadline", took, d)
	}
	b, _ := json.Marshal(res)
	if bytes.Contains(b, []byte(canary)) {
		t.Errorf("the canary secret leaked into the result: %.300s", b)
	}
	if res.Error != nil && (strings.Contains(res.Error.Message, "goroutine ") || strings.Contains(res.Error.Message, "/tmp/")) {
		t.Errorf("error leaks a stack or a path: %q", res.Error.Message)
	}
	// The server still answers.
	if out, err := broker.CallDirect(ctx, bindings.LocalPrincipal, "ping", json.RawMessage(`{"n":1}`)); err != nil || string(out) != "2" {
		t.Fatalf("server does not answer after the case: %s, %v", out, err)
	}
}

func matches(got string, expect []string) bool {
	for _, e := range expect {
		if e == got || e == "ok" && strings.HasPrefix(got, "ok:") {
			return true
		}
		if strings.HasPrefix(e, "ok:") && strings.HasPrefix(got, "ok:") {
			var a, b any
			if json.Unmarshal([]byte(e[3:]), &a) == nil && json.Unmarshal([]byte(got[3:]), &b) == nil {
				ja, _ := json.Marshal(a)
				jb, _ := json.Marshal(b)
				if bytes.Equal(ja, jb) {
					return true
				}
			}
		}
	}
	return false
}

// settle waits until the pool is full again (each warm worker has a few
// goroutines of its own in the server) and the goroutines of finished runs
// have ended, then returns the goroutine count and the heap in use.
func settle(pool *process.Pool) (int, uint64) {
	for deadline := time.Now().Add(2 * time.Minute); pool.Ready() < pool.Size() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	var g int
	stable := 0
	for i := 0; i < 300 && stable < 5; i++ {
		runtime.GC()
		n := runtime.NumGoroutine()
		if n == g {
			stable++
		} else {
			stable = 0
		}
		g = n
		time.Sleep(20 * time.Millisecond)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return g, ms.HeapInuse
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
