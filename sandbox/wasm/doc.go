// Package wasm is sandcall's WebAssembly engine: wazero, in the calling
// process. It is the only package that imports wazero.
//
// An Engine runs each sandbox.Job whose Program.Language is sandbox.WASM:
// Program.Module is a WebAssembly binary that imports the host module
// "sandcall" (the ABI of bindings/abi.md: call a tool, blocking or async for
// fan-out, read the input, set the result, log) and, optionally,
// wasi_snapshot_preview1. The entry point is _start (a WASI command) or,
// failing that, an exported run. Tool calls go to sandbox.Host exactly as
// the JavaScript engine's do: a failed call comes back to the guest as
// status 1 with the error's JSON (code, message, hint, retryable, ...), the
// guest's equivalent of a ToolError.
//
// Modules are compiled once and kept by the SHA-256 of their bytes in a
// bounded LRU (Config.CacheSize), so a module submitted again skips
// pre-validation and compilation; Put and Module let a server hold modules
// that clients then name by hash (run_code's module_sha256). Each run
// instantiates the compiled module afresh: no memory, globals or tables
// survive a run.
//
// # Security
//
// In-process, this engine is not a security boundary (docs/security.md); the
// process tier, which runs it in a killable worker under OS limits, is. What
// the engine itself guarantees:
//
//   - Capabilities are absent: the only imports a module may have are the
//     functions of "sandcall" and of wasi_snapshot_preview1, checked before
//     compilation; importing memories, tables or globals is refused. WASI has
//     no filesystem (no preopened directory), no network, no environment,
//     args ["program"], an empty stdin, a fake clock (fixed start, 1 ms per
//     reading), sleeps that return at once and a deterministic random
//     stream: wazero's safe defaults. A job with a Seed and a Clock
//     (sandbox.Job, a run that may be resumed by replay) reads random_get
//     from its seed and the realtime clock frozen at its Clock instead.
//   - Every host function bounds-checks each pointer/length pair against the
//     guest's memory before touching it (an out-of-range pair is ABI error
//     -1 and nothing is read) and copies bytes out before validating them;
//     no more is copied than a limit can use.
//   - A pre-validator (internal/prevalidate) reads the module binary before
//     wazero does and refuses abusive shapes: size, function count, body
//     size, locals, control nesting, br_table size, table size, table.grow
//     on an unbounded table, initial memory over the run's limit, 64-bit or
//     shared memories. It is fuzzed (FuzzPrevalidate).
//   - Compilation runs under a time budget (Config.CompileTimeout); a module
//     that exceeds it is refused from then on. wazero cannot interrupt a
//     compilation, so it finishes in the background, bounded to GOMAXPROCS
//     compilations at a time.
//   - The run's deadline and cancellation close the module
//     (WithCloseOnContextDone): loops are interrupted at their back edges
//     and calls at function entry. A host call in progress is cancelled
//     through its ctx, and Execute waits for every call goroutine.
//   - Traps end the run with E_GUEST_ERROR and the trap's reason (and the
//     guest function it happened in); call-stack exhaustion is E_STACK. No
//     Go stack, host path or wazero internal reaches the outcome: a panic in
//     a host function is reported as a bare E_INTERNAL.
//
// Use Config.Compiler only in worker processes. wazero's compiler is
// native code: an exponential call tree with no loops is interrupted only at
// function entries, and a hostile module can drive compilation time to
// minutes, holding a CPU the whole time. The interpreter (the default) is
// for the in-process tier. Config.CacheDir keeps native code on disk; any
// process that can write there can make later runs execute its code, so
// give it a directory only sandcall's own user can write (New checks).
//
// # Limits
//
// Per run, from sandbox.Limits: Timeout (E_TIMEOUT; the engine enforces it
// whatever ctx says, on a sandbox.Wall that stops while a call waits for a
// person's approval), MemoryBytes (the guest's linear memory, in 64 KiB
// pages: an initial memory over it is refused with E_MODULE_LIMIT,
// memory.grow past it returns -1), MaxCalls (the call past it completes at
// once with status 1, E_TOOL_CALL_LIMIT), MaxResultBytes (E_OUTPUT_LIMIT, or
// up to Job.KeepResultBytes the result comes back whole for the caller to
// cut and page; a progress value over it is refused with -6),
// MaxLogBytes (the log ABI and stdout/stderr share it; output past it is
// dropped and Outcome.LogsTruncated set; more than 1 MiB past it stops the
// run with E_OUTPUT_LIMIT) and MaxModuleBytes (E_MODULE_LIMIT).
// MaxInFlight is the host's to enforce, as for JavaScript: the engine starts
// every call_async at once. MaxSourceBytes and MaxStackFrames do not apply
// (the wasm call stack is wazero's, bounded by its own stack limit).
//
// Fixed bounds: 1,000 handles outstanding (MaxHandles); tool names 256
// bytes; arguments 1 MiB and 64 levels; and the pre-validator's limits
// (bindings/abi.md): 10,000 functions, 256 KiB and 50,000 locals per body,
// nesting 2,048, 10,000 br_table targets, 10,000 table elements.
package wasm

//go:generate sh -c "cd testdata && for f in *.wat; do wat2wasm --enable-all --no-check $DOLLAR{f} -o $DOLLAR{f%.wat}.wasm || exit 1; done"
