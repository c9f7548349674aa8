// expect: E_TOOL_UNKNOWN
return await tools.call("__proto__", {})
