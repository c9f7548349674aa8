package demo

import (
	_ "embed"
	"encoding/json"

	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/examples/market"
)

// FanoutProgram makes 1,000 ping calls in parallel batches of 50 and returns
// 500500: it measures the per-call cost of the binding path.
//
//go:embed fanout.js
var FanoutProgram string

// FanoutModule is FanoutProgram as a WebAssembly module (fanout.wat): the
// same 1,000 ping calls through the ABI's call_async and wait, in batches
// of 50; its result is the same 500500.
//
//go:generate wat2wasm --enable-all --no-check fanout.wat -o fanout.wasm
//go:embed fanout.wasm
var FanoutModule []byte

// Workload is one standard benchmark program and the result it must give.
type Workload struct {
	Name    string
	Program string
	// Input is the program's input (nil: none).
	Input json.RawMessage
	// Want is the exact compact JSON result.
	Want string
	// Calls is the number of tool calls one run makes.
	Calls int
}

// Workloads returns the standard workloads (docs/workloads.md, "Standard
// workloads"): the expense check and the 1,000-call fan-out, and the market report over its
// 20-ticker watchlist (63 calls). Run them against ToolsWith(market.Options{}):
// the market report's Want assumes no injected failures.
func Workloads() []Workload {
	return []Workload{
		{Name: "expense", Program: expense.Program, Want: string(expense.ReferenceSummary()), Calls: 56},
		{Name: "fanout", Program: FanoutProgram, Want: "500500", Calls: 1000},
		{Name: "market", Program: market.Program, Input: market.WatchlistInput(),
			Want: string(market.ReferenceJSON(market.Watchlist())), Calls: market.Calls(len(market.Watchlist()))},
	}
}
