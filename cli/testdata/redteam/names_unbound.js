// expect: E_TOOL_UNKNOWN
return await tools.rm_rf({})
