// expect: E_TOOL_ARGS
return await tools.get_team_members({ department: "e".repeat(1 << 20) })
