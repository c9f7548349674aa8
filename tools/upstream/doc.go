// Package upstream adds the tools of upstream MCP servers to a sandcall
// catalog. It reads the MCP client configs users already have (.mcp.json and
// friends), connects to each server with the go-sdk client, lists its tools
// and adds each as <server>_<tool>, forwarding calls with the caller's
// context, a per-server timeout and cancellation.
//
// # Config sources, highest priority first
//
//  1. files named explicitly (LoadConfig.Files; sandcall.yaml passes them), in order;
//  2. .cursor/mcp.json (key "mcpServers");
//  3. .vscode/mcp.json (key "servers");
//  4. .mcp.json (key "mcpServers");
//  5. mcp.json (key "mcpServers").
//
// An explicit file may use either key. The same server name in several
// sources is never merged: the highest-priority definition wins and the
// others are reported as shadowed.
//
// A server: "type" is "stdio" (the default), "http" or "sse"; stdio needs
// "command" (optional "args", "env", "cwd"); http and sse need "url"
// (optional "headers"); "enabled": false skips it; "timeout" bounds each call
// and the connection, as milliseconds (a JSON number) or a Go duration string
// ("30s"); if absent, DefaultTimeout.
//
// # Security
//
// Every string may use ${VAR} and ${VAR:-default}; an unresolved variable is
// an error naming the server and field, never a silently empty value. A
// header or env value starting with "!" is a shell command run once (its
// result cached for the process) whose trimmed stdout is the value; it runs
// when the server is connected, not when the config is merely listed. Stdio
// servers get a minimal environment (PATH, HOME, LANG and their configured
// env), never sandcall's whole environment. Tool text from a server is
// untrusted: descriptions are stripped of control and zero-width characters
// and capped at MaxDescriptionBytes, and each tool definition is pinned by
// hash at first sight (Pins): a changed definition disables the tool until
// it is approved again.
//
// # Limits
//
// Reconnection with backoff and tools/list_changed are not handled yet: a
// server that dies leaves its tools failing with a retryable E_TOOL_FAILED.
// Results are unwrapped for programs (structured content, JSON text, text);
// direct MCP callers should later get the upstream result as is.
package upstream
