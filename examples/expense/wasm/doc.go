// Command wasm is the expense workload (examples/expense/program.js)
// written in Go for sandcall's WebAssembly engine: who in engineering went
// over their Q3 travel budget? Its result is expense.ReferenceSummary, byte
// for byte, after 56 tool calls: the team, the budget of each distinct
// level (in parallel), and each member's Q3 expenses (50, in parallel).
//
// Build it and run it:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -ldflags='-s -w' -o expense.wasm ./examples/expense/wasm
//	sandcall run --demo --lang wasm expense.wasm
//
// That build is committed, gzip-compressed, as expense.wasm.gz (package
// expense embeds it as ModuleGo, so that `sandcall bench` runs it from any
// directory; TestModuleGoMatchesSource checks that it is this source's
// build). The same workload in C, a 45 KB module that is the fast path for
// WebAssembly, is in examples/expense/c.
package main
