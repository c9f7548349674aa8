// expect: E_TOOL_ARGS
return await tools.get_expenses({ member_id: "ENG-001" })
