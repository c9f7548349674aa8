package js

import (
	"testing"

	"github.com/dop251/goja"

	"github.com/sandcall/sandcall/internal/testenv"
)

// The floor benchmarks run the standard workloads in plain goja, with no
// sandbox at all: the data is built in JS and the tools are JS async
// functions, so there is no host, no conversion, no hardening. They show
// what goja itself costs on this machine, which bounds what the engine can
// reach (see the closing notes of the foundation issue).

const floorExpenseSetup = `
const team = []; for (let i = 0; i < 50; i++) team.push({ id: "ENG-" + i, name: "N " + i, level: "L" + (1 + i % 5) });
const exp = {}; for (const m of team) { const rows = []; for (let j = 0; j < 40; j++) rows.push({ date: "2024-07-01", category: j % 3 == 0 ? "travel" : "meals", amount: 100 + j, description: "x".repeat(80) }); exp[m.id] = rows; }
var tools = {
  get_team_members: async () => team,
  get_budget_by_level: async ({ level }) => ({ level, travel_limit: 3000, currency: "USD" }),
  get_expenses: async ({ member_id }) => exp[member_id],
};`

// BenchmarkFloorExpenseData builds the expense data in plain goja.
func BenchmarkFloorExpenseData(b *testing.B) {
	setup := goja.MustCompile("setup", floorExpenseSetup, false)
	for b.Loop() {
		if _, err := goja.New().RunProgram(setup); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFloorExpense builds the data and runs the program in plain goja;
// the program alone costs the difference with BenchmarkFloorExpenseData.
func BenchmarkFloorExpense(b *testing.B) {
	setup := goja.MustCompile("setup", floorExpenseSetup, false)
	prog := goja.MustCompile("prog", "(async () => {"+testenv.Workload(b, "expense/program.js")+"\n})()", false)
	for b.Loop() {
		r := goja.New()
		if _, err := r.RunProgram(setup); err != nil {
			b.Fatal(err)
		}
		v, err := r.RunProgram(prog)
		if err != nil || v.Export().(*goja.Promise).State() != goja.PromiseStateFulfilled {
			b.Fatal("program failed", err)
		}
	}
}

// BenchmarkFloorFanout runs the 1,000-call fan-out in plain goja with a JS
// async ping.
func BenchmarkFloorFanout(b *testing.B) {
	prog := goja.MustCompile("prog", "var tools = { ping: async ({ n }) => n + 1 };\n(async () => {\n"+
		testenv.Workload(b, "demo/fanout.js")+"\n})()", false)
	for b.Loop() {
		v, err := goja.New().RunProgram(prog)
		if err != nil || v.Export().(*goja.Promise).Result().ToInteger() != 500500 {
			b.Fatal("fan-out failed", err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "calls/s")
}
