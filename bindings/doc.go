// Package bindings is the guest-facing side of tools and the one place where
// a call is decided.
//
// The Broker is the single path of every tool call, from a program (caller
// "code") or from the model through MCP (caller "direct"):
//
//	lookup (E_TOOL_UNKNOWN) → schema validation (E_TOOL_ARGS)
//	→ Authorizer at dispatch (E_TOOL_DENIED) → budgets (E_TOOL_CALL_LIMIT, in-flight cap)
//	→ handler with a per-call timeout → output budget (E_OUTPUT_LIMIT) → audit
//
// The Runner runs one program: it resolves the limits (a request may lower
// the operator's ceiling, never raise it), binds the tools the Authorizer
// exposes to code, executes the program on a sandbox.Executor with a per-run
// Host, and assembles the sandbox.Result that run_code returns.
//
// # Security
//
// Authorization happens for each call, at dispatch, never once per run; the
// caller and principal are set by the host, never supplied by a client or a
// guest. Audit records carry a SHA-256 of the arguments, never the
// arguments. Tool panics and bare Go errors are turned into E_TOOL_FAILED
// with a generic message, so a host path or secret in an error text does not
// reach a guest; the real error goes to BrokerConfig.Logger.
//
// # Limits
//
// Calls per run (default 1,000), calls in flight per run (default 16; calls
// beyond it wait for a slot in their own goroutine, never in the guest's),
// one call's time (default 30 s) and one result's size (the tool's
// OutputBudget, else 4 MiB).
package bindings
