// expect: E_TOOL_ARGS
return await tools.get_budget_by_level({ level: { valueOf() { for (;;) {} }, toString() { for (;;) {} } } })
