// expect: E_TOOL_CALL_LIMIT|E_TIMEOUT
const ps = []; for (let i = 0; i < 5000; i++) ps.push(tools.get_budget_by_level({ level: "L1" })); await Promise.all(ps); return ps.length
