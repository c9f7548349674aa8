package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/internal/testenv"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/wasm"
	"github.com/sandcall/sandcall/tools"
)

// newRunner returns a runner of WebAssembly programs over the demo tools,
// through the real broker, authorized by auth (nil: the default).
func newRunner(t testing.TB, compiler bool, auth bindings.Authorizer) *bindings.Runner {
	t.Helper()
	return newRunnerWith(t, wasm.Config{Compiler: compiler}, auth)
}

// newRunnerWith is newRunner for an engine configured by cfg (its compile
// timeout raised to two minutes).
func newRunnerWith(t testing.TB, cfg wasm.Config, auth bindings.Authorizer) *bindings.Runner {
	t.Helper()
	c, err := tools.NewCatalog(demo.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: c, Authorizer: auth})
	if err != nil {
		t.Fatal(err)
	}
	// A 3.3 MB Go module compiles in ~2.6 s, but far slower under -race.
	cfg.CompileTimeout = 2 * time.Minute
	e, err := wasm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	// The longest wall time allowed: the interpreter runs the module in
	// seconds, and -race makes that tens of seconds. The test checks
	// results, not speed (the benchmarks do).
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: e,
		Languages: []sandbox.Language{sandbox.WASM}, Limits: sandbox.Limits{Timeout: sandbox.MaxTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunExpense runs the Go guest on the WebAssembly engine, interpreter
// and compiler: the workload's 56 calls, and ReferenceSummary byte for byte.
func TestRunExpense(t *testing.T) {
	mod := module(t)
	for _, compiler := range []bool{false, true} {
		name := map[bool]string{false: "interpreter", true: "compiler"}[compiler]
		t.Run(name, func(t *testing.T) {
			if compiler && testing.Short() {
				t.Skip("-short: compiling the 3.4 MB module takes seconds")
			}
			if testenv.Race {
				// Race-instrumented, wazero's compiler takes over a minute on
				// this module and its interpreter 25 s to over 60 s a run on a
				// loaded machine: a test that would end at the time limit,
				// not at a bug. The host side of guest calls runs under -race
				// in sandbox/wasm (fixtures calls_1000, fanout) and
				// bindings/wasmguest; this module runs without -race and in
				// every process-tier worker (a binary built without -race).
				t.Skip("-race: a run of this 3.4 MB module takes about a minute instrumented")
			}
			r := newRunner(t, compiler, nil)
			// The second run finds the module compiled in the engine's cache.
			runs := []string{"cold", "warm"}
			for _, run := range runs {
				res := r.Run(context.Background(), bindings.RunRequest{
					Program: sandbox.Program{Language: sandbox.WASM, Module: mod}})
				checkExpense(t, res)
				t.Logf("%s, %s run: %.1f ms, module %d bytes", name, run, res.DurationMS, len(mod))
			}
		})
	}
}

// TestRunExpenseC runs the same workload's C guest (expense.ModuleC, the
// fast path) on the interpreter and the compiler, with and without
// interrupt checks (the compiler without them is what workers run): the same
// 56 calls and ReferenceSummary byte for byte, twice (the second run finds
// the module compiled).
func TestRunExpenseC(t *testing.T) {
	for _, cfg := range []struct {
		name string
		cfg  wasm.Config
	}{
		{"interpreter", wasm.Config{}},
		{"compiler", wasm.Config{Compiler: true}},
		{"compiler-nointerrupt", wasm.Config{Compiler: true, NoInterrupt: true}},
	} {
		t.Run(cfg.name, func(t *testing.T) {
			r := newRunnerWith(t, cfg.cfg, nil)
			for range 2 {
				checkExpense(t, r.Run(context.Background(), bindings.RunRequest{
					Program: sandbox.Program{Language: sandbox.WASM, Module: expense.ModuleC}}))
			}
		})
	}
}

// checkExpense checks a run of the workload: ReferenceSummary byte for
// byte, after the workload's 56 calls.
func checkExpense(t *testing.T, res *sandbox.Result) {
	t.Helper()
	if !res.OK {
		t.Fatalf("run failed: %v\nlogs: %q", res.Error, res.Logs)
	}
	if want := expense.ReferenceSummary(); !bytes.Equal(res.Result, want) {
		t.Fatalf("result differs from ReferenceSummary:\n got %s\nwant %s", res.Result, want)
	}
	if sum := sha256.Sum256(res.Result); hex.EncodeToString(sum[:]) != expense.SummarySHA256 {
		t.Errorf("sha256 %x", sum)
	}
	want := map[string]int{"get_team_members": 1, "get_budget_by_level": 5, "get_expenses": 50}
	if res.Calls.Total != expense.DirectCalls || res.Calls.OK != expense.DirectCalls {
		t.Errorf("calls %+v, want %d ok", res.Calls, expense.DirectCalls)
	}
	for tool, n := range want {
		if res.Calls.ByTool[tool] != n {
			t.Errorf("%s called %d times, want %d", tool, res.Calls.ByTool[tool], n)
		}
	}
}

// denyExpenses denies get_expenses for one member, with a rule and a hint.
type denyExpenses struct{ bindings.DefaultAuthorizer }

func (d denyExpenses) Authorize(ctx context.Context, c *bindings.CallInfo) bindings.Decision {
	if c.Tool.Name == "get_expenses" && strings.Contains(string(c.Args), `"ENG-007"`) {
		return bindings.Decision{Rule: "no-eng-007", Reason: "test", Message: "ENG-007 is private", Hint: "Skip ENG-007."}
	}
	return d.DefaultAuthorizer.Authorize(ctx, c)
}

// TestRunExpenseDenied: a denial inside the fan-out reaches the guest as a
// *wasmguest.ToolError, which the program logs to stderr before it exits 1.
func TestRunExpenseDenied(t *testing.T) {
	if testenv.Race {
		t.Skip("-race: a run of this 3.4 MB module takes about a minute instrumented (see TestRunExpense)")
	}
	r := newRunner(t, false, denyExpenses{})
	res := r.Run(context.Background(), bindings.RunRequest{
		Program: sandbox.Program{Language: sandbox.WASM, Module: module(t)}})
	if res.OK || res.Error == nil || res.Error.Code != sandbox.EGuestError {
		t.Fatalf("ok %v, error %v; want E_GUEST_ERROR", res.OK, res.Error)
	}
	if res.Calls.Denied != 1 || res.Calls.Total != expense.DirectCalls {
		t.Errorf("calls %+v: want 56, 1 denied (the fan-out completes)", res.Calls)
	}
	logs := strings.Join(res.Logs, "\n")
	if !strings.Contains(logs, "E_TOOL_DENIED: ENG-007 is private") {
		t.Errorf("logs %q do not carry the denial", res.Logs)
	}
}
