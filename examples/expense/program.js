// Expense check: which engineers went over their Q3 travel budget?
// The body of an async function: `await` works at top level, `return` gives the result.
const team = await tools.get_team_members({ department: "engineering" });
const levels = [...new Set(team.map((m) => m.level))];
const budgetList = await Promise.all(levels.map((level) => tools.get_budget_by_level({ level })));
const budgets = {};
levels.forEach((l, i) => { budgets[l] = budgetList[i]; });
const expenses = await Promise.all(team.map((m) => tools.get_expenses({ member_id: m.id, quarter: "Q3" })));
const over = [];
team.forEach((m, i) => {
  let travel = 0;
  for (const e of expenses[i]) if (e.category === "travel") travel += e.amount;
  const limit = budgets[m.level].travel_limit;
  if (travel > limit) {
    over.push({ id: m.id, name: m.name, level: m.level,
      travel_total: Math.round(travel * 100) / 100, travel_limit: limit,
      over_by: Math.round((travel - limit) * 100) / 100 });
  }
});
return over;
