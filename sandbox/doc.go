// Package sandbox holds the engine-neutral types of sandcall: a Program, the
// Limits it runs under, the Host interface through which a guest reaches its
// tools, the Outcome an engine reports, the Result a client sees, and the one
// Error type with its closed set of codes (docs/errors.md).
//
// Engines live in sub-packages: sandbox/js (goja) is the only importer of
// goja, sandbox/wasm (wazero) the only importer of wazero. Engines never see
// policy or MCP: every tool call goes through Host, and the host (package
// bindings) validates, authorizes, dispatches and audits it.
package sandbox
