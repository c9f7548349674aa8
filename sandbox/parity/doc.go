// Package parity holds the engine-parity suite: one set of data-driven
// cases (testdata/*.txtar) run against both engines, the JavaScript engine
// (sandbox/js) and the WebAssembly engine (sandbox/wasm, interpreter and
// compiler), with testdata/exceptions.txt giving a reason for every
// difference, as OPA runs its test cases against its two evaluators.
//
// The package has no API; its tests are the point. A case is a txtar
// archive whose comment holds "key: value" limits (timeout, max_calls,
// max_result_bytes, max_log_bytes) and whose files are:
//
//	-- js --     the JavaScript program (errorJSON(e) turns a caught ToolError
//	             into the error JSON a WebAssembly guest reads, bindings/abi.md)
//	-- wasm --   the name of a module in testdata/wasm (its .wasm, built from
//	             its .wat by the command in the .wat's first lines)
//	-- input --  the run's input JSON (optional)
//	-- host --   the fake broker's tools, one per line: NAME BEHAVIOUR [ARGS]
//	             (ping, echo, fail_transient, denied RULE, enum FIELD A,B,C);
//	             any other name is E_TOOL_UNKNOWN
//	-- want --   ok:JSON (the exact compact result) or an error code
//
// A difference between an engine's outcome and want fails the suite unless
// exceptions.txt lists it ("case | engine | outcome | why"); a listed
// exception that no longer occurs fails it too, so the file stays true.
package parity

//go:generate sh -c "cd testdata/wasm && for f in *.wat; do wat2wasm --enable-all --no-check $DOLLAR{f} -o $DOLLAR{f%.wat}.wasm || exit 1; done"
