// Expense check: which engineers went over their Q3 travel budget?
// The body of an async function: `await` works at top level, `return` gives the result.
// TypeScript: types are stripped, not checked; the result is program.js's, byte for byte.
interface Member { id: string; name: string; level: Level }
type Level = "L1" | "L2" | "L3" | "L4" | "L5";
interface Budget { level: Level; travel_limit: number; currency: string }
interface Expense { date: string; category: string; amount: number; description: string }
interface OverBudget {
  id: string; name: string; level: Level;
  travel_total: number; travel_limit: number; over_by: number;
}

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
const over: OverBudget[] = [];
team.forEach((m, i) => {
  const travel = sumBy(expenses[i], (e) => e.category === "travel", (e) => e.amount);
  const limit = budgets[m.level]!.travel_limit;
  if (travel > limit) {
    over.push({ id: m.id, name: m.name, level: m.level,
      travel_total: cents(travel), travel_limit: limit, over_by: cents(travel - limit) });
  }
});
return over;
