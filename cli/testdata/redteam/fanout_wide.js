// expect: ok:500
const rs = await Promise.all(Array.from({ length: 500 }, () => tools.get_budget_by_level({ level: "L4" }))); return rs.filter(r => r.travel_limit === 6500).length
