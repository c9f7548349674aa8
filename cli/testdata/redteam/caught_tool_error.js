// expect: ok:"E_TOOL_ARGS"
try { await tools.get_budget_by_level({ level: "L9" }) } catch (e) { return e.code }
