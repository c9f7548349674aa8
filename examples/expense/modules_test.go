package expense_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/internal/testenv"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/wasm"
	"github.com/sandcall/sandcall/tools"
)

// cBuild is the C guest's build (see c/expense.c and modules.go), and the
// clang release the committed module was built with: another release
// compiles the same source to other bytes.
var (
	cBuild = []string{"--target=wasm32-wasi", "-O2", "-nostartfiles", "-Wl,--no-entry", "-Wl,--strip-all"}
	cClang = "14.0.6"
)

// TestModuleCMatchesSource rebuilds the C guest with the installed clang
// and wasi-libc and compares it with the committed ModuleC.
func TestModuleCMatchesSource(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		t.Skip("skipped: no clang (apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32)")
	}
	v, _ := exec.Command(clang, "--version").Output()
	if m := regexp.MustCompile(`clang version (\S+)`).FindSubmatch(v); m == nil || !bytes.HasPrefix(m[1], []byte(cClang)) {
		t.Skipf("skipped: ModuleC was built with clang %s; this is %q", cClang, bytes.TrimSpace(v))
	}
	out := filepath.Join(t.TempDir(), "expense.wasm")
	cmd := exec.Command(clang, append(cBuild, "-o", out, "c/expense.c")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("skipped: clang cannot build for wasm32-wasi here (wasi-libc, lld, libclang-rt-14-dev-wasm32?): %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, expense.ModuleC) {
		t.Errorf("c/expense.wasm (%d bytes) is not the build of c/expense.c (%d bytes): run go generate ./examples/expense", len(expense.ModuleC), len(b))
	}
}

// TestModules runs both guests on the WebAssembly engine (the interpreter,
// as in-process; the compiler, as in a worker): each returns
// ReferenceSummary byte for byte after the workload's 56 calls, twice (the
// second run finds the module compiled).
func TestModules(t *testing.T) {
	for name, mod := range map[string][]byte{"c": expense.ModuleC, "go": expense.ModuleGo()} {
		for _, compiler := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "/interpreter", true: "/compiler"}[compiler], func(t *testing.T) {
				if name == "go" && (testing.Short() || testenv.Race) {
					// Race-instrumented, wazero takes about a minute to compile
					// or interpret the 3.4 MB Go module; examples/expense/wasm
					// runs it without -race.
					t.Skip("-short or -race: the Go guest takes tens of seconds here")
				}
				c, err := tools.NewCatalog(expense.Tools()...)
				if err != nil {
					t.Fatal(err)
				}
				b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: c})
				if err != nil {
					t.Fatal(err)
				}
				e, err := wasm.New(wasm.Config{Compiler: compiler, CompileTimeout: 2 * time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { e.Close(context.Background()) })
				r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: e,
					Languages: []sandbox.Language{sandbox.WASM}, Limits: sandbox.Limits{Timeout: sandbox.MaxTimeout}})
				if err != nil {
					t.Fatal(err)
				}
				for range 2 {
					res := r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Language: sandbox.WASM, Module: mod}})
					if !res.OK {
						t.Fatalf("run failed: %v (logs %q)", res.Error, res.Logs)
					}
					if want := expense.ReferenceSummary(); !bytes.Equal(res.Result, want) {
						t.Fatalf("result differs from ReferenceSummary:\n got %s\nwant %s", res.Result, want)
					}
					if res.Calls.Total != expense.DirectCalls || res.Calls.OK != expense.DirectCalls {
						t.Errorf("calls %+v, want %d ok", res.Calls, expense.DirectCalls)
					}
				}
			})
		}
	}
}
