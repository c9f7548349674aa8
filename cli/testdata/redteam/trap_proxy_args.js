// expect: E_TOOL_ARGS
return await tools.get_team_members(new Proxy({ department: "engineering" }, { getOwnPropertyDescriptor() { for (;;) {} } }))
