// expect: E_TOOL_CALL_LIMIT
for (;;) await tools.get_budget_by_level({ level: "L3" })
