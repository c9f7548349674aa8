// Package mcpserver is sandcall's MCP face: it serves the run_code tool
// (programmatic tool calling) and every catalog tool the policy exposes to
// direct callers, as typed MCP tools, over stdio or streamable HTTP.
//
// Go programs embed sandcall with their own tools by building a catalog, a
// broker, a runner and a Server:
//
//	cat, _ := tools.NewCatalog(myTools...)
//	broker, _ := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
//	runner, _ := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{})})
//	srv, _ := mcpserver.New(mcpserver.Config{Runner: runner})
//	srv.Run(ctx, &mcp.StdioTransport{})          // or http.Handle("/", srv.HTTPHandler())
//
// # Tools
//
// run_code takes code (the body of an async function), language, input,
// timeout_ms (and module_base64 for WebAssembly) and answers with a
// sandbox.Result as structured content plus the same compact JSON as a text
// block. A failed program is a result with isError set and error.code, never
// a protocol error. Its description lists the callable bindings (name and one
// line each) so a model can write a program without further lookups.
//
// A catalog tool exposed to direct callers is served with its input schema,
// an output schema and annotations taken from tools.Effects. MCP requires
// structured content to be an object: a tool whose output schema is an
// object schema returns its result as is; any other tool returns
// {"result": <value>}, and its advertised output schema is wrapped the same
// way. A failed call is an isError result whose structured content is the
// *sandbox.Error. Every direct call goes through bindings.Broker.CallDirect,
// so it is validated, authorized, budgeted and audited like a call from code.
//
// Refresh re-syncs the tool list when the catalog or the policy changes;
// clients are told with notifications/tools/list_changed.
//
// # Progress and cancellation
//
// When a client sends a progressToken with run_code, the server reports tool
// calls as they complete ("12 calls done (11 ok, 1 failed)"), at most once per
// Config.ProgressInterval. notifications/cancelled cancels the run, which
// ends with E_CANCELLED; over HTTP, a client that disconnects while its call
// runs cancels it too.
//
// # Security
//
// The server never writes to stdout itself, and a guest's console output is
// captured by the engine, so nothing a program prints can reach the stdio
// stream (the sandcall binary also points file descriptor 1 at stderr once
// it holds the protocol stream). A panic in a handler becomes an E_INTERNAL
// result; the panic goes to Config.Logger, never to the client. HTTPHandler
// keeps the SDK's DNS-rebinding protection on, refuses cross-origin requests
// and caps request bodies (see HTTPHandler). There is no authentication yet:
// every session acts for Config.Principal.
//
// # Limits
//
// The runner's limits apply to every run; timeout_ms may lower the wall time,
// never raise it past the runner's ceiling. HTTP bodies are capped at
// Config.MaxRequestBytes (by default 4 MiB, or room for the largest WebAssembly
// module in base64), stdio lines by the SDK.
package mcpserver
