// Package js is sandcall's JavaScript engine: goja, hardened, in the calling
// process. It is the only package that imports goja.
//
// An Engine runs each sandbox.Job in a fresh goja runtime. The program is the
// body of an async function: top-level await works and return gives the
// result. The guest sees tools.<name>(args) for every name in Job.Tools (a
// Promise per call), tools.call(name, args), tools.$search(query, limit)
// and tools.$describe(names) (wrappers over the search_tools and
// describe_tools bindings, defined only when those are bound), input
// (Program.Input, or null). The tools object is read-only and `'name' in
// tools` is true only for bound names; reading any other name gives a
// function that calls the host by that name (like tools.call), so a
// misspelt, unknown or denied tool rejects with the host's ToolError
// (E_TOOL_UNKNOWN with the closest names, E_TOOL_DENIED with the rule)
// rather than a TypeError;
// console.log/info/warn/error/debug (captured into Outcome.Logs), progress(value)
// (saves the compact JSON of value as Outcome.Partial, the last one wins,
// bounded by the result budget; what the run reports if it then fails),
// state.get/set/delete/keys (state kept between runs: each sends one of the
// sandbox.State* calls to the host, like a tool call; state.go) and the
// ToolError class that failed calls reject with (from sandbox/js/prelude).
// Plan reads which tools a program names from its syntax tree, before it
// runs (plan.go); with Job.SendPlan the engine hands the host that plan,
// read from the tree it compiles, before the program runs, and returns the
// host's refusal without running it (sandbox.PlanCall).
// A host that implements sandbox.LogSink or sandbox.PartialSink gets each log
// entry and each saved value as it happens.
// Nothing else: no require, fetch, process, timers, eval or Function
// constructor (reached by any path: Function, Function.prototype.constructor
// and the constructors of async and generator functions all throw).
//
// The guest goroutine runs the event loop. A tool call converts its
// arguments on the guest goroutine, starts Host.Call in its own goroutine and
// returns a promise; completions come back over a channel and are resolved
// on the guest goroutine, so calls awaited together (Promise.all) run in
// parallel. Results cross as compact JSON, validated and indexed once on
// the Go side (no guest JSON.parse, no Go maps handed to the guest), and
// reach the guest as lazy values (see Tool results).
//
// Guest values leave the runtime (tool arguments, the result, thrown values
// in error messages, logged values) through one bounded converter that never
// runs guest code: no getters, proxies, toJSON, toString or valueOf. Its
// output is what JSON.stringify gives for plain data, byte for byte. toJSON
// methods other than Date's built-in one are not called.
//
// # Tool results
//
// Objects and arrays in tool results (and in input and
// ToolError.allowed_values) are goja dynamic objects and arrays whose
// members are created on first access and then kept, so r.x === r.x holds
// and a program that reads a few fields of a large result pays for those
// only. Each call's result has its own values, even when two calls return
// the same bytes. They are copy-on-write: the first change to an object or
// array gives it its own members (values already read stay the same
// objects), after which it behaves like a plain object or array: key order
// (array indices first, ascending, then insertion order), in, delete,
// spread, for-in, for-of, Object.keys/entries, JSON.stringify, the Array
// methods, Array.isArray, instanceof and prototypes are as for the value
// JSON.parse would give. The handlers only ever return goja primitives or
// other lazy values; no Go value or method is reachable. A result, or a
// part of one, that the program has not changed is converted back to JSON
// (tool arguments, the program's result, JSON.stringify) by copying its
// original bytes when they are exactly what JSON.stringify would write.
//
// goja's dynamic objects cannot become ordinary objects, so a few
// operations differ from a plain value (TestLazySemantics pins each one);
// copy the value first ({...r}, [...a], or JSON.parse(JSON.stringify(r)))
// where they matter:
//
//   - Object.freeze, Object.seal and Object.preventExtensions throw a
//     TypeError, and Reflect.preventExtensions returns false; the value
//     stays extensible and writable.
//   - Object.defineProperty with a getter or setter, or with writable,
//     enumerable or configurable false, throws a TypeError; own Symbol
//     properties cannot be added (a TypeError in strict code, ignored
//     otherwise).
//   - Arrays are dense: delete a[i] stores undefined (i in a stays true),
//     and growing an array (a[n] = v past its end, a.length = n) fills it
//     with undefined rather than holes. Growth past Limits.MemoryBytes/16
//     elements stops the run with E_MEMORY.
//   - Arrays take no named properties: a.foo = 1 and a[-1] = 1 are a
//     TypeError in strict code and ignored otherwise.
//
// # Security
//
// The in-process engine is not a security boundary (docs/security.md): goja
// cannot bound the memory a program allocates, a native built-in cannot be
// interrupted, and a bug in goja is a bug in the host process. The process
// tier (rlimits, GOMEMLIMIT, a killable worker) is the boundary; this engine
// is what runs inside it, and what tests and trusted code use directly.
//
// Within that, the engine denies what it can: the deadline interrupts guest
// code (loops, async spins, callbacks from sort or replace) and stays armed
// until the runtime is dropped; the call stack is bounded (E_STACK); source
// maps are disabled so no file is opened; source size and nesting are checked
// before the recursive parser runs (E_SOURCE_LIMIT); a parse cannot escape
// the async-function wrapper; values crossing the boundary are converted
// without running guest code; JSON.stringify and JSON.parse are bounded in
// depth; one backtracking regular expression match is bounded in time (a
// regexp2 match timeout; the run then fails with E_TIMEOUT); and the
// well-known single-call allocators (repeat, padStart/padEnd, fill, join,
// split(""), Array.from, apply, ArrayBuffer and typed arrays) refuse results
// over Limits.MemoryBytes with E_MEMORY. These memory guards are defence in
// depth against the obvious bombs, not a bound: a program that allocates in
// a loop can still exhaust the process.
//
// # Limits
//
// Per run, from sandbox.Limits: Timeout (also enforced by the engine itself,
// whatever ctx says; a sandbox.Wall that stops while a call waits for a
// person's approval), MemoryBytes (the single-call guards only), MaxCalls
// (calls past it reject at once with E_TOOL_CALL_LIMIT and start nothing),
// MaxResultBytes (E_OUTPUT_LIMIT; up to Job.KeepResultBytes the result comes
// back whole for the caller to cut and page; a progress(value) over it
// throws a ToolError with E_OUTPUT_LIMIT), MaxLogBytes (output past it is dropped and
// Outcome.LogsTruncated set; a program that tries to log more than 1 MiB past
// the budget stops with E_OUTPUT_LIMIT), MaxSourceBytes and MaxStackFrames.
// MaxInFlight is the host's to enforce: the engine starts every call the
// program makes and never blocks the guest on a slot.
//
// Fixed bounds: nesting of the source 512 (MaxNesting); tool arguments 64
// levels and 1 MiB of JSON; the result 256 levels; JSON.stringify and
// JSON.parse in the guest 1,000 levels; host results 512 levels; one regular
// expression match 1 s. Compiled programs are cached by source hash (see
// Config).
//
// Host.Call must honour its ctx: when a run ends, the calls still in flight
// are cancelled and Execute waits for them to return.
package js
