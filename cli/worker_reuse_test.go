package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/confine"
	"github.com/sandcall/sandcall/sandbox/process"
	"github.com/sandcall/sandcall/tools"
)

// reusePool is a pool of the real binary's workers, confined as this machine
// allows, reused within a principal; it reports the worker of each job.
func reusePool(t *testing.T, reuse int) (*bindings.Runner, func() []int) {
	t.Helper()
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	// The longest deadline: the tests are about what a job leaves, and the
	// leak program's megabytes of garbage took over 10 s on a loaded machine.
	limits := sandbox.Limits{Timeout: sandbox.MaxTimeout}.Resolve()
	args := workerArgs(limits, false, reuse)
	rep := confine.Probe(confine.Config{WorkerArgs: args, Executable: bin})
	var mu sync.Mutex
	var pids []int
	pool, err := process.New(process.Config{
		Command:     append([]string{bin}, args...),
		Size:        1,
		Reuse:       reuse,
		MemoryBytes: limits.MemoryBytes,
		SysProcAttr: rep.SysProcAttr(),
		Env:         append(rep.Environ(), "GOGC=off"),
		OnJob: func(pid int, _ string) {
			mu.Lock()
			pids = append(pids, pid)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	cat, _ := tools.NewCatalog(demo.Tools()...)
	broker, _ := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: pool, Limits: limits, Tier: rep.Tier(),
		Languages: []sandbox.Language{sandbox.JavaScript, sandbox.TypeScript, sandbox.WASM}})
	if err != nil {
		t.Fatal(err)
	}
	return r, func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), pids...)
	}
}

// TestReuseLeavesNothingJS: job N leaves a secret everywhere a program can
// (globals, prototypes of every built-in, replaced built-ins, symbols,
// non-enumerable properties, 4 MiB of buffers and thousands of strings on
// the heap); job N+1, in the same worker process of the real binary,
// searches for it by every means the guest has (walking everything
// reachable, property enumeration, function sources, error stacks, fresh
// buffers) and finds nothing. The control run shows the search finds the
// secret within one job. The same program twice also covers the worker's
// compiled-program cache.
func TestReuseLeavesNothingJS(t *testing.T) {
	t.Parallel()
	r, pids := reusePool(t, 8)
	src, err := os.ReadFile("testdata/reuse/leak.js")
	if err != nil {
		t.Fatal(err)
	}
	run := func(secret string, control bool) []string {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"secret": secret, "control": control})
		res := r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Source: string(src), Input: in},
			Principal: bindings.Principal{ID: "alice"}})
		if !res.OK {
			t.Fatalf("run: %v", res.Error)
		}
		var found []string
		if err := json.Unmarshal(res.Result, &found); err != nil {
			t.Fatalf("result %s: %v", res.Result, err)
		}
		return found
	}
	if found := run("sk-reuse-control", true); len(found) < 10 {
		t.Fatalf("control: the search found only %q of what the job left; it cannot prove anything", found)
	}
	for i := 1; i <= 4; i++ {
		if found := run(fmt.Sprintf("sk-reuse-job%d", i), false); len(found) != 0 {
			t.Errorf("job %d found what an earlier job left: %q", i, found)
		}
	}
	ps := pids()
	for _, p := range ps[1:] {
		if p != ps[0] {
			t.Fatalf("jobs ran in workers %v, want one reused worker: the test proves nothing", ps)
		}
	}
}

// TestReuseLeavesNothingWasm: a module instance's memory and globals do not
// survive into the next run of the same (cached) module in the same worker.
func TestReuseLeavesNothingWasm(t *testing.T) {
	t.Parallel()
	r, pids := reusePool(t, 8)
	mod := leakModule()
	for i := 1; i <= 3; i++ {
		res := r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Language: sandbox.WASM, Module: mod},
			Principal: bindings.Principal{ID: "alice"}})
		if !res.OK {
			t.Fatalf("run %d: %v", i, res.Error)
		}
		if string(res.Result) != `"clean"` {
			t.Fatalf("run %d found what an earlier run left: %s", i, res.Result)
		}
	}
	ps := pids()
	if len(ps) != 3 || ps[0] != ps[1] || ps[1] != ps[2] {
		t.Fatalf("runs went to workers %v, want one reused worker", ps)
	}
}

// leakModule is a WebAssembly module whose run returns "found" if its
// memory at 1024 or its mutable global holds anything, "clean" otherwise,
// and then writes both: a second run in the same instance would say
// "found". Encoded by hand (no assembler needed): imports sandcall.set_result.
func leakModule() []byte {
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	body := []byte{
		0x00,       // no locals
		0x23, 0x00, // global.get 0
		0x41, 0x80, 0x08, // i32.const 1024
		0x29, 0x03, 0x00, // i64.load
		0x42, 0x00, // i64.const 0
		0x52,       // i64.ne
		0x72,       // i32.or
		0x04, 0x40, // if
		0x41, 0x10, 0x41, 0x07, 0x10, 0x00, 0x1a, // set_result(16, 7) → "found"
		0x05,                                     // else
		0x41, 0x00, 0x41, 0x07, 0x10, 0x00, 0x1a, // set_result(0, 7) → "clean"
		0x0b,                   // end
		0x41, 0x01, 0x24, 0x00, // global.set 0 (1)
		0x41, 0x80, 0x08, 0x42, 0x2a, 0x37, 0x03, 0x00, // i64.store 1024 ← 42
		0x0b, // end
	}
	return cat(
		[]byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00},
		sec(1, 0x02, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x00),
		sec(2, cat([]byte{0x01}, str("sandcall"), str("set_result"), []byte{0x00, 0x00})...),
		sec(3, 0x01, 0x01),
		sec(5, 0x01, 0x00, 0x01),
		sec(6, 0x01, 0x7f, 0x01, 0x41, 0x00, 0x0b),
		sec(7, cat([]byte{0x02}, str("memory"), []byte{0x02, 0x00}, str("run"), []byte{0x00, 0x01})...),
		sec(10, cat([]byte{0x01, byte(len(body))}, body)...),
		sec(11, cat([]byte{0x02, 0x00, 0x41, 0x00, 0x0b}, str(`"clean"`), []byte{0x00, 0x41, 0x10, 0x0b}, str(`"found"`))...),
	)
}

// TestRunProbeCacheFailsClosed: `sandcall run` keeps the confinement probe's
// report in the user's cache and starts no probe worker when it has one; a
// cached report that no longer holds (here: Landlock claimed through
// AllThreadsSyscall, which a cgo binary cannot do) makes the worker refuse
// to start rather than run with less, and the run probes afresh and
// succeeds.
func TestRunProbeCacheFailsClosed(t *testing.T) {
	t.Parallel()
	cache, dir := t.TempDir(), t.TempDir()
	prog := writeFile(t, dir, "prog.js", "return 1")
	run := func() (string, string) {
		t.Helper()
		// The cache dir goes to the child's environment, not this
		// process's (t.Setenv would forbid running in parallel).
		out, stderr, code := sandcallIn(t, dir, []string{"XDG_CACHE_HOME=" + cache}, "run", "--log-level", "info", prog)
		if code != 0 || strings.TrimSpace(out) != "1" {
			t.Fatalf("run: exit %d, %q, %s", code, out, stderr)
		}
		return out, stderr
	}
	run()
	files, _ := filepath.Glob(filepath.Join(cache, "sandcall", "probe-*.json"))
	if len(files) != 1 {
		t.Fatalf("probe cache files: %v", files)
	}
	if _, stderr := run(); strings.Contains(stderr, "probing again") {
		t.Fatalf("a valid cached report was not used: %s", stderr)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	mode, _ := rep["Landlock"].(string)
	if mode != "exec" && mode != "early" {
		t.Skipf("Landlock mode %q here: the test needs a cgo binary (whose probe chose the constructor or the re-exec)", mode)
	}
	rep["Landlock"] = "allthreads"
	b, _ = json.Marshal(rep)
	if err := os.WriteFile(files[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr := run(); !strings.Contains(stderr, "probing again") {
		t.Fatalf("the stale report was not detected: %s", stderr)
	}
	b, _ = os.ReadFile(files[0])
	if !strings.Contains(string(b), `"Landlock":"`+mode+`"`) {
		t.Fatalf("the cache was not renewed: %s", b)
	}
}
