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
// a protocol error. Its description lists the callable bindings (TypeScript
// signature and one line each) so a model can write a program without
// further lookups.
//
// # Large catalogs
//
// tools/list stays small whatever the catalog size. When a program may call
// more than Config.ListThreshold tools (default 30), run_code's description
// names the tool families (name prefix and count) and points to
// search_tools and describe_tools (tools.$search and tools.$describe in
// programs) instead of listing each tool; when more than that many tools
// are exposed to direct callers, tools/list holds only run_code,
// read_output, the discovery tools and tools the policy pins (`pin:
// true`). Every tool exposed to direct callers is still served, and one
// that programs may not call (without a policy: every possibly destructive
// tool) is added to a session's tools/list once that session's
// search_tools surfaces it, with notifications/tools/list_changed
// (deferred listing, see deferred.go): whatever search_tools shows a
// caller can be called by the route its call field names. With the 202-tool fixture
// repeated to 500 tools, tools/list is about 13.5 KB and the description
// about 1.6 KB (TestListingLargeCatalog). Add the discovery tools with
// bindings.AddDiscovery.
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
// When a client sends a progressToken with run_code, the server reports the
// run as it goes ("12 calls done (11 ok, 1 failed), 3 in flight, 2.5s
// elapsed; progress saved once"): soon after a call starts or finishes or
// the program saves progress(value), at most once per
// Config.ProgressInterval, and as a heartbeat every second (or
// ProgressInterval, if longer) while nothing changes. The progress value
// is the elapsed time in milliseconds, with no total. notifications/cancelled
// cancels the run, which ends with E_CANCELLED; over HTTP, a client that
// disconnects while its call runs cancels it too. A run that fails —
// cancelled, timed out, anything — still reports its calls, its logs and
// the last value saved with progress(value) (Result.Partial).
//
// # Long results
//
// A result over the result budget (up to 8 MiB, sandbox.MaxKeptResultBytes)
// comes back cut: truncated is true, result is the first page of the
// result's compact JSON as a string, and output_ref, output_bytes and
// output_next_offset say where the rest is. The read_output tool pages
// through it ({ref, offset, limit} → {ref, offset, data, next_offset,
// total_bytes, eof}); offsets are bytes, pages end at character
// boundaries, and the pages concatenated are exactly the JSON text. The
// server keeps at most Config.MaxOutputs outputs and Config.MaxOutputBytes
// bytes (the least recently read go first) for Config.OutputTTL each; a
// ref is 128 random bits, bound to the principal of the run: another
// principal's ref, an expired one or a made-up one is the same E_TOOL_ARGS.
//
// # Security
//
// The server never writes to stdout itself, and a guest's console output is
// captured by the engine, so nothing a program prints can reach the stdio
// stream (the sandcall binary also points file descriptor 1 at stderr once
// it holds the protocol stream). A panic in a handler becomes an E_INTERNAL
// result; the panic goes to Config.Logger, never to the client. HTTPHandler
// keeps the SDK's DNS-rebinding protection on, refuses cross-origin requests
// and caps request bodies (see HTTPHandler). Over HTTP, when Config.Tokens is
// set, every request needs a bearer token, stored hashed (HashToken), and its
// session acts for the token's principal; otherwise (stdio, or HTTP without
// tokens, which serve allows on loopback only) every session acts for
// Config.Principal.
//
// # Hosted authentication
//
// With Config.Hosted.JWT, HTTP requests may also carry JWT access tokens
// issued by an OAuth authorization server (ExampleHostedAuth): checked
// against the issuer's JWKS (cached; refreshed on an unknown kid at most
// once per bearer.JWTConfig.RefreshInterval; known keys kept when a refresh
// fails), for the algorithm (asymmetric only), exp, nbf, iat, iss and aud
// (the resource's own URL, HostedAuth.PublicURL + "/mcp", unless
// bearer.JWTConfig.Audience says otherwise). Such a request acts for
// bearer.JWTPrincipalPrefix + its subject. A refused request gets 401 (403 for
// missing scopes) with a WWW-Authenticate challenge that says why (RFC
// 6750) and where the protected resource metadata (RFC 9728) is; a token
// that cannot be checked because the keys could not be fetched gets 503
// with Retry-After. See RATIONALE.md for the library and refresh policy.
//
// # Limits
//
// The runner's limits apply to every run; timeout_ms may lower the wall time,
// never raise it past the runner's ceiling. HTTP bodies are capped at
// Config.MaxRequestBytes (by default 4 MiB, or room for the largest WebAssembly
// module in base64), stdio lines by the SDK.
package mcpserver
