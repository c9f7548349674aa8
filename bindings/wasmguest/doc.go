// Package wasmguest is the Go side of sandcall's WebAssembly ABI: a program
// built with GOOS=wasip1 GOARCH=wasm calls the server's allowlisted tools in
// one line, reads its input and returns its result.
//
//	//go:build wasip1
//
//	package main
//
//	import "github.com/sandcall/sandcall/bindings/wasmguest"
//
//	func main() {
//		var in struct{ N int64 `json:"n"` }
//		if err := wasmguest.Input(&in); err != nil {
//			panic(err)
//		}
//		var n int64
//		if err := wasmguest.Call("ping", map[string]int64{"n": in.N}, &n); err != nil {
//			panic(err) // a *ToolError: Code, Message, Hint, ...
//		}
//		if err := wasmguest.Return(map[string]int64{"next": n}); err != nil {
//			panic(err)
//		}
//	}
//
// Build it small and submit the module as run_code's module_base64 (or run
// it with `sandcall run --lang wasm prog.wasm`):
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -ldflags='-s -w' -o prog.wasm .
//
// The module is a WASI command: the host runs main (the exported _start).
// Returning from main without calling Return gives the result null; a panic
// or os.Exit with a non-zero status ends the run with E_GUEST_ERROR. The
// ABI itself, for other languages, is bindings/abi.md.
//
// # Calls
//
// Call is one blocking tool call: the arguments are marshalled with
// encoding/json (nil sends {}), the result is unmarshalled into out (which
// may be nil). A tool that fails returns a *ToolError carrying the same
// stable code, message and hint as a JavaScript program's ToolError; test
// its kind with errors.Is against the Err* sentinels, or read its fields
// with errors.As. A failure of the ABI itself (which a correct program and
// host never see) is an *ABIError.
//
// Fan-out: Start begins a call and returns a *Pending at once; calls
// started together run in parallel on the host, and Wait collects each one.
// CallAll does both for a list of calls, and Map for many calls of one tool:
//
//	expenses, err := wasmguest.Map[[]Expense]("get_expenses", args) // all in parallel
//
// RawCall is Call without encoding/json, for programs that bring their own
// encoder; an out of type *json.RawMessage (in Call, Wait, CallAll or Map)
// receives the result's JSON as the host sent it, not scanned again, for
// a program that reads large results itself (examples/expense/wasm reads
// 300 KB of expense rows that way).
//
// # Logs
//
// Log writes one log entry. Standard output and standard error work too:
// fmt.Println and the log package write through WASI, and the host captures
// both into the run's logs under the same budget, one entry per line
// (stderr lines prefixed with "[error] ").
//
// # Progress
//
// Progress saves a JSON value as the run's partial result (the last one
// wins): if the run then times out or is cancelled, the result still
// carries it as "partial". It needs a host with the ABI's progress import;
// a module that never calls Progress does not import it.
//
// # State
//
// StateGet, StateSet, StateDelete and StateKeys keep values between runs,
// per principal, as JavaScript's state global does: plain calls of the
// host's $state.* names, with the same quotas and time to live. A value
// read carries the information-flow label of the run that wrote it
// (docs/guest-api.md).
//
// # Security
//
// The guest holds no capability of its own: every call goes to the host,
// which authorizes it at dispatch like a JavaScript program's call; the
// tools the policy does not expose to code answer E_TOOL_UNKNOWN. WASI
// gives the module no filesystem, no network and no environment.
//
// # Limits
//
// The run's limits apply as in JavaScript: calls per run, calls in flight
// (calls beyond the cap queue on the host), result and log sizes, memory
// in pages and wall time. A blocking host call blocks the whole Go runtime,
// which has one thread under wasip1: parallelism comes from the host
// running calls started with Start while the guest waits.
//
// # Off wasip1
//
// The package builds on every platform so that programs and their pure
// logic can be vetted and tested natively, but outside a sandcall guest
// every function returns ErrNotGuest (and Log does nothing). For the same
// reason its examples are compiled, not run, by go test: they need the
// host.
package wasmguest
