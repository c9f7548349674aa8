package ts

import (
	"strings"
	"testing"
)

// benchProgram is a model-sized TypeScript program (the shape of
// examples/expense/program.ts).
const benchProgram = `interface Member { id: string; name: string; level: Level }
type Level = "L1" | "L2" | "L3" | "L4" | "L5";
interface Budget { level: Level; travel_limit: number; currency: string }
interface Expense { date: string; category: string; amount: number; description: string }
const cents = (x: number): number => Math.round(x * 100) / 100;
function sumBy<T>(rows: readonly T[], keep: (r: T) => boolean, value: (r: T) => number): number {
  let total = 0;
  for (const r of rows) if (keep(r)) total += value(r);
  return total;
}
const team: Member[] = await tools.get_team_members({ department: "engineering" });
const levels: Level[] = [...new Set(team.map((m) => m.level))];
const budgetList = await Promise.all(levels.map((level) => tools.get_budget_by_level({ level }))) as Budget[];
const budgets: Partial<Record<Level, Budget>> = {};
levels.forEach((l, i) => { budgets[l] = budgetList[i]; });
const expenses: Expense[][] = await Promise.all(team.map((m) => tools.get_expenses({ member_id: m.id, quarter: "Q3" })));
return team.filter((m, i) => sumBy(expenses[i], (e) => e.category === "travel", (e) => e.amount) > budgets[m.level]!.travel_limit)
  .map((m) => ({ id: m.id, over: cents(1) }));
`

// BenchmarkTranspile measures esbuild on a model-sized program and on one
// near the 256 KiB source limit.
func BenchmarkTranspile(b *testing.B) {
	big := strings.Repeat("{\n"+strings.ReplaceAll(benchProgram, "return ", "void ")+"}\n", (250<<10)/(len(benchProgram)+4))
	for _, bc := range []struct {
		name, src string
	}{{"model", benchProgram}, {"256KiB", big}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.src)))
			for b.Loop() {
				if _, err := Transpile(bc.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
