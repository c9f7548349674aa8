// expect: E_TOOL_ARGS
return await tools.get_team_members({ department: ["engineering"] })
