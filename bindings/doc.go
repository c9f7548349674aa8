// Package bindings is the guest-facing side of tools and the one place where
// a call is decided.
//
// The Broker is the single path of every tool call, from a program (caller
// "code") or from the model through MCP (caller "direct"):
//
//	lookup, deprecated aliases included (E_TOOL_UNKNOWN) → schema validation (E_TOOL_ARGS)
//	→ Authorizer at dispatch (E_TOOL_DENIED) → budgets (E_TOOL_CALL_LIMIT, in-flight cap)
//	→ handler with a per-call timeout, retried after transient failures of idempotent tools
//	→ output budget: cut by whole items, else E_OUTPUT_LIMIT → audit
//
// # Errors
//
// Every error the broker returns is a *sandbox.Error with a code, a
// message and a hint (a default for its code when the tool gave none). A
// tool error's reason tells apart invalid input ("invalid_input",
// E_TOOL_ARGS, with allowed_values when an enum was violated), a transient
// failure ("transient", the only kind with retryable: true), unavailable
// data ("unavailable") and a denial ("denied", E_TOOL_DENIED, with the
// rule). A program's ToolError carries the same fields.
//
// # Retries
//
// A transient failure (a retryable E_TOOL_FAILED, such as tools.Transient
// or the broker's own per-call timeout) of a tool whose Effects say it is
// idempotent is retried, at most BrokerConfig.MaxRetries times (default 2),
// after a jittered backoff (default 20 ms, then 80 ms), never past the
// caller's deadline; a cancellation during the backoff ends the call at
// once. Each attempt gets the full per-call timeout and holds an in-flight
// slot only while its handler runs. The call is authorized once and counts
// once against the run's limits and in calls.by_tool; each retried attempt
// has its own audit record (attempt number), and calls.retries counts the
// retries. A non-idempotent tool is never retried: it may have acted.
// Direct calls follow the same rule.
//
// # Output over budget
//
// A result over the tool's output budget is cut by whole items: a
// top-level array keeps its longest prefix that fits and stays an array;
// an object keeps its largest top-level array's longest prefix, and a
// program's copy gets "truncated": true and "omitted": K at its root. Each
// cut counts in calls.truncated and leaves a line in the run's logs
// naming the tool and the count; a direct MCP call gets a text note and
// _meta.truncated instead of in-band keys (its output schema may be
// closed). Anything else over budget fails with E_OUTPUT_LIMIT. The cut
// is exact to the byte and linear in the result's size. See truncate.go
// for why.
//
// # Deprecated names
//
// A tool's Aliases are never listed but stay callable until their Until
// (the Runner binds them as tools.<alias> too, and tools.call and WASM
// calls resolve them): the call is the tool's own (policy, limits and
// by_tool see the new name), a program's object result gets a next_action
// key naming the replacement (unless it has one), and the run's logs say
// it once. After the window a call by the old name fails with
// E_TOOL_UNKNOWN whose hint names the new tool. The MCP server lists and
// serves only current names, so a direct MCP call by an old name is an
// unknown tool; Broker.DirectOutcome resolves aliases for embedders and
// puts next_action in its Meta.
//
// # Discovery
//
// AddDiscovery adds search_tools (BM25 over names, descriptions and
// parameters, with a relevance floor; package tools/search) and
// describe_tools (TypeScript declarations with JSDoc and examples; package
// bindings/tsdecl) to the catalog as ordinary tools. Each shows only the
// tools its caller may call for its principal, never itself or an alias.
//
// The Runner runs one program: it resolves the limits (a request may lower
// the operator's ceiling, never raise it), binds the tools the Authorizer
// exposes to code, executes the program on a sandbox.Executor with a per-run
// Host, and assembles the sandbox.Result that run_code returns.
//
// # Programs, plans and state
//
// Before a program runs, its engine hands the broker its plan (Job.SendPlan,
// sandbox.PlanCall; a WebAssembly module's the broker reads itself, with
// sandbox/plan) and the broker asks the policy's plan rules about it,
// through the program tools it names;
// a refused program makes no call, and a call whose tool the plan did not
// list is asked about again (plan.go). A program tool (tools/programs:
// .agents/programs files, saved programs) runs as its caller: its calls
// are authorized as code for the caller's principal, its label joins the
// caller's run, programs nest at most BrokerConfig.MaxProgramDepth deep,
// and a saved program is its owner's only (programs.go). A program's
// state.get/set/delete/keys are answered from a store.Space, per
// principal, each value with the label of the run that wrote it
// (state.go). docs/programs.md has the whole.
//
// # Approvals without a session
//
// A run with RunRequest.Suspend does not wait for a person: at the first
// call that needs an approval it lets the calls inside the broker finish,
// stops, and Runner.RunResumable returns a Suspension (the log of the
// completed calls with their results, the pending call, the question). A
// RunRequest with a Replay runs the program again from the start with the
// same Seed and Clock (Math.random and Date fixed per run): logged calls
// are answered from the log and never made again, the pending call is made
// or declined per the answer, and a logged tool called with other
// arguments before it is a divergence, denied with E_TOOL_DENIED. The MCP
// layer seals the Suspension into a 2026-07-28 request state. A direct
// call does the same (DirectCall.Suspend, DirectCall.Resume): it returns
// DirectResult.Suspension instead of asking, and its answer makes the call
// once or declines it. A WebAssembly run reads WASI's random and realtime
// clock from the same Seed and Clock. A suspended run is audited as
// "suspended"; a replay names it (resumed_from).
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
// one call's time (default 30 s, for each attempt) and one result's size
// (the tool's OutputBudget, else 4 MiB; see Output over budget). A run
// keeps at most 16 broker notes (of 512 bytes each) for its logs.
package bindings
