// expect: E_TOOL_UNKNOWN
return await tools.call("../../bin/sh", { c: "id" })
