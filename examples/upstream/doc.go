// Package upstream is the upstream-server example: a project whose
// .mcp.json names an MCP server (here `sandcall serve --demo` itself) and a
// program that fans out over that server's tools.
//
// sandcall reads .mcp.json (the format MCP clients already use), starts the
// server, lists its tools and adds each as <server>_<tool>: the demo's
// get_expenses becomes demo_get_expenses. A program then calls it like any
// tool, through the broker and its policy:
//
//	{"mcpServers": {"demo": {"command": "sandcall", "args": ["serve", "--demo"]}}}
//
//	const ids = ["ENG-001", "ENG-002", "ENG-003", "ENG-004", "ENG-005"];
//	const rows = await Promise.all(ids.map(id =>
//	  tools.demo_get_expenses({member_id: id, quarter: "Q3"})));
//	return ids.map((id, i) => ({id, total: rows[i].reduce((a, e) => a + e.amount, 0)}));
//
// Try it from a directory holding that .mcp.json:
//
//	sandcall servers test demo     # connects and lists demo_* tools
//	sandcall servers trust         # after reading .mcp.json: lets serve/run start it
//	sandcall run --demo program.js
//
// When the server exits, sandcall reconnects with backoff (calls in the
// meantime fail with a retryable E_TOOL_FAILED); when it sends
// notifications/tools/list_changed, its tools are listed again. The test
// in this directory runs the fan-out above against the real binary and
// checks the totals against the expense reference data.
package upstream
