// @description Which engineers went over their travel budget in a quarter?
//   Returns one row per engineer over budget: id, name, level, travel total,
//   limit and by how much.
// @param *quarter string the quarter: Q1, Q2, Q3 or Q4
// @readonly
const team = await tools.get_team_members({ department: "engineering" });
const levels = [...new Set(team.map((m) => m.level))];
const budgetList = await Promise.all(levels.map((level) => tools.get_budget_by_level({ level })));
const budgets = {};
levels.forEach((l, i) => { budgets[l] = budgetList[i]; });
const expenses = await Promise.all(team.map((m) => tools.get_expenses({ member_id: m.id, quarter: args.quarter })));
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
