package demo_test

import (
	"context"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/examples/market"
	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// newRunner wires the demo toolset, the broker and an in-process JS engine
// the way `sandcall serve --isolation inprocess --demo` does.
func newRunner(tb testing.TB, cfg js.Config) *bindings.Runner {
	return newRunnerWith(tb, cfg, nil)
}

// newRunnerWith is newRunner under the authorizer a (nil: the default).
func newRunnerWith(tb testing.TB, cfg js.Config, a bindings.Authorizer) *bindings.Runner {
	tb.Helper()
	cat, err := tools.NewCatalog(demo.ToolsWith(market.Options{})...)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat, Authorizer: a})
	if err != nil {
		tb.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(cfg)})
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func workload(tb testing.TB, name string) demo.Workload {
	for _, w := range demo.Workloads() {
		if w.Name == name {
			return w
		}
	}
	tb.Fatalf("no workload %q", name)
	return demo.Workload{}
}

func run(tb testing.TB, r *bindings.Runner, w demo.Workload) {
	res := r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Source: w.Program, Input: w.Input}})
	if !res.OK {
		tb.Fatalf("%s: %v", w.Name, res.Error)
	}
	if string(res.Result) != w.Want || res.Calls.Total != w.Calls {
		tb.Fatalf("%s: result %.80s (%d calls), want %.80s (%d calls)", w.Name, res.Result, res.Calls.Total, w.Want, w.Calls)
	}
}

func TestWorkloads(t *testing.T) {
	r := newRunner(t, js.Config{})
	for _, w := range demo.Workloads() {
		t.Run(w.Name, func(t *testing.T) { run(t, r, w) })
	}
}

// BenchmarkExpense is the warm run: the program is compiled once and cached,
// the demo tools' results are cached; every run still gets a fresh runtime
// and fresh values for all 56 results.
func BenchmarkExpense(b *testing.B) {
	r := newRunner(b, js.Config{})
	w := workload(b, "expense")
	run(b, r, w)
	b.ReportAllocs()
	for b.Loop() {
		run(b, r, w)
	}
}

// BenchmarkExpensePolicy is BenchmarkExpense under the example policy
// (examples/policies/expense.yaml: the expense reads code-only, a `when` on
// every get_expenses call). Compare the two: the policy's cost is one
// decision per call, 56 per run.
func BenchmarkExpensePolicy(b *testing.B) {
	c, err := policy.Load("../policies/expense.yaml")
	if err != nil {
		b.Fatal(err)
	}
	r := newRunnerWith(b, js.Config{}, bindings.NewPolicyAuthorizer(c))
	w := workload(b, "expense")
	run(b, r, w)
	b.ReportAllocs()
	for b.Loop() {
		run(b, r, w)
	}
}

// BenchmarkExpenseCold compiles the program on every run (no program cache).
func BenchmarkExpenseCold(b *testing.B) {
	r := newRunner(b, js.Config{ProgramCacheSize: -1})
	w := workload(b, "expense")
	b.ReportAllocs()
	for b.Loop() {
		run(b, r, w)
	}
}

// BenchmarkMarket is the warm market report: 63 calls, about 500 KB of
// tool results reduced to a 3 KB report.
func BenchmarkMarket(b *testing.B) {
	r := newRunner(b, js.Config{})
	w := workload(b, "market")
	run(b, r, w)
	b.ReportAllocs()
	for b.Loop() {
		run(b, r, w)
	}
}

// BenchmarkFanout makes 1,000 ping calls per run; calls/s is the figure.
func BenchmarkFanout(b *testing.B) {
	r := newRunner(b, js.Config{})
	w := workload(b, "fanout")
	b.ReportAllocs()
	for b.Loop() {
		run(b, r, w)
	}
	b.ReportMetric(float64(b.N*w.Calls)/b.Elapsed().Seconds(), "calls/s")
}
