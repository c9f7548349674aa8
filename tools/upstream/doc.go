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
// ("30s"); if absent, DefaultTimeout. "followRedirects": true lets an
// http/sse server redirect to another origin (followed without the
// configured headers).
//
// # Security
//
// Configured headers go only to the configured URL's origin (scheme, host
// and port): a redirect to another origin is refused unless the server sets
// "followRedirects", and then followed without them; no request at all goes
// to an origin that is neither configured nor a followed redirect (an SSE
// endpoint event naming another host is refused). An answer that is not an
// event stream is read as a stream and cut off past MaxResponseBytes (event
// streams are capped per event by the SDK), so an endless answer costs
// bounded memory.
//
// Every string may use ${VAR} and ${VAR:-default}; an unresolved variable is
// an error naming the server and field, never a silently empty value. A
// header or env value starting with "!" is a shell command run once (its
// result cached for the process) whose trimmed stdout is the value; it runs
// when the server is connected, not when the config is merely listed. Stdio
// servers get a minimal environment (PATH, HOME, LANG and their configured
// env), never sandcall's whole environment. Tool text from a server is
// untrusted: descriptions are stripped of control and zero-width characters
// and capped at MaxDescriptionBytes, and each tool definition (name,
// description, schemas, annotations) is pinned by hash at first sight
// (Pins): a changed definition (a "rug pull") disables the tool until an
// operator approves it again. With OpenPins the pins live in a file
// (DefaultPinFile, 0600, written atomically under a lock), so a definition
// that changed while sandcall was down is still caught; a corrupt pin file
// is an error, never an empty set. A serving Set polls the file and
// re-enables an approved tool without a restart.
//
// # Trust
//
// A project's configs are written by whoever can push to it, so Attach
// starts a server only when Options.Trust allows it, and asks again before
// every start (reconnections included). Pin says what trusting a server
// pins: its definition as written, the executable its command resolves to,
// and the content of the project files it runs or loads as code
// (codefiles.txt); tools/trust keeps the pins outside the project. IsSelf
// recognises an entry that runs sandcall itself, whatever its flags: it is
// never started. Config files are read bounded, regular files only, and a
// project's own never through a link leaving the project; their JSON
// errors carry file:line:col (Config.Errors).
//
// # States
//
// Every configured server has a State (Set.Statuses): starting, up,
// failed (with its cause: the connection error and the end of its
// stderr), untrusted, disabled, invalid, self, or not started. Set.ServerOf
// maps a catalog name to its server, and Set.Wait waits for a starting
// server's first attempt, so that a caller can make a call of a starting
// server's tool wait, and say why the tool of a server that is not up is
// missing, instead of calling it unknown.
//
// # Lifecycle
//
// A server whose first connection fails is retried in the background, and
// one whose session drops is reconnected, with jittered exponential backoff
// (250ms doubling to 30s); its tools appear, or come back, when it is up.
// notifications/tools/list_changed re-lists a server's tools. A re-list
// changes the catalog in one step (tools.Catalog.Replace): tools that stay
// are never missing, even for a moment. SetEnabled turns a server on or off
// in the file that defines it (`sandcall servers enable|disable NAME`).
//
// # Results
//
// Programs get the unwrapped value (structured content, the "result" of a
// {"result": v} wrapper, JSON text, or text); an upstream isError result is
// an E_TOOL_FAILED with its text. Direct MCP callers get the upstream's
// CallToolResult as is (tools.Tool.DirectRaw), and see the upstream's own
// output schema.
//
// A call whose caller listens for progress (tools.WithProgress: the runner,
// for a program's calls) carries its own progress token, and the server's
// notifications/progress for it reach tools.ReportProgress: the run's
// progress then names the call ("github_search: 40/100").
//
// A tool listed with execution.taskSupport "required" (callable only as an
// MCP task, which sandcall does not do) is left out, with the reason among
// the server's warnings; go-sdk's mcp.Tool has no such field, so the
// connection reads it from the raw tools/list answers.
//
// # Limits
//
// During an outage a server's tools stay in the catalog and fail with a
// retryable E_TOOL_FAILED. Enabling or disabling a server takes effect at
// the next start. Pins are keyed by catalog name, so renaming a server
// pins its tools afresh.
package upstream
