package js

import (
	"context"
	"testing"

	"github.com/sandcall/sandcall/internal/testenv"
	"github.com/sandcall/sandcall/sandbox"
)

func benchRun(b *testing.B, src string, tools []string, want string) {
	e := New(Config{})
	expenseData()
	job := &sandbox.Job{Program: sandbox.Program{Source: src}, Limits: sandbox.DefaultLimits(), Tools: tools}
	h := newHost()
	out := e.Execute(context.Background(), job, h)
	if out.Err != nil || (want != "" && string(out.Value) != want) {
		b.Fatalf("got %s %v", out.Value, out.Err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Execute(context.Background(), job, h)
	}
}

// BenchmarkExpense is the expense workload: 56 calls, about 313 KB of
// results, a fresh runtime per run.
func BenchmarkExpense(b *testing.B) {
	benchRun(b, testenv.Workload(b, "expense/program.js"), expenseTools, "")
}

// BenchmarkFanout is 1,000 trivial calls in batches of 50.
func BenchmarkFanout(b *testing.B) {
	benchRun(b, testenv.Workload(b, "demo/fanout.js"), []string{"ping"}, "500500")
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkEmpty is the fixed cost of a run: runtime creation, hardening,
// prelude, guards.
func BenchmarkEmpty(b *testing.B) {
	benchRun(b, "return 1", expenseTools, "1")
}

// BenchmarkToJSON converts the result-sized value (16 rows).
func BenchmarkToJSON(b *testing.B) {
	r := newTestRun(b)
	v, err := r.rt.RunString(`Array.from({length: 16}, (_, i) => ({id: "ENG-0" + i, name: "Ada Lovelace", level: "L3", travel_total: 1234.56, travel_limit: 4000, over_by: 12.5}))`)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := r.encoder(modeResult, 1<<20).encode(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildValue builds one get_expenses result (40 rows).
func BenchmarkBuildValue(b *testing.B) {
	r := newTestRun(b)
	expenseData()
	data := expensesJSON["ENG-001"]
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := r.buildValue(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLazyArgs passes an unchanged tool result back as arguments
// (its original bytes are copied) and returns a changed one.
func BenchmarkLazyArgs(b *testing.B) {
	benchRun(b, `const t = await tools.get_team_members({department: "engineering"});
for (let i = 0; i < 20; i++) await tools.echo({all: t});
t[0].name = "x";
return t.length`, testTools, "50")
}
