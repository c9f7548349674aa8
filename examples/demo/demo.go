// Package demo is the embedded demo toolset that `sandcall serve --demo`,
// `sandcall run --demo` and `sandcall bench` offer: the expense tools
// (package expense), ping, the trivial tool of the fan-out benchmark, and the
// market tools (package market).
package demo

import (
	"context"

	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/examples/market"
	"github.com/sandcall/sandcall/tools"
)

// PingArgs are the arguments of ping.
type PingArgs struct {
	// N is bounded to JavaScript's safe integers so that n+1 is exact in a
	// guest too.
	N int64 `json:"n" minimum:"-9007199254740991" maximum:"9007199254740990" jsonschema:"any integer; the result is n + 1"`
}

// Ping returns the ping tool: ping({n}) → n + 1.
func Ping() *tools.Tool {
	return tools.MustFunc(tools.Tool{
		Name:  "ping",
		Title: "Ping",
		Description: "Does the tool path work, and how fast? Returns n + 1 for an integer n, and does nothing else.\n" +
			"Use to check connectivity or to measure the cost of a tool call (the fan-out benchmark makes 1,000 of them). " +
			"Do not use for real work: it reads and changes nothing.",
		Examples:     []tools.Example{{Description: "Returns its argument plus one.", Args: []byte(`{"n":41}`), Result: []byte(`42`)}},
		Effects:      tools.Effects{ReadOnly: true, Idempotent: true},
		OutputBudget: 32, // one integer
	}, func(ctx context.Context, in PingArgs) (int64, error) {
		return in.N + 1, nil
	})
}

// Tools returns the demo toolset, new on each call: the expense tools, ping,
// and the market tools with the demo's injected failures
// (market.DemoOptions: 10% of get_price_history calls fail transiently, to
// exercise retries).
func Tools() []*tools.Tool { return ToolsWith(market.DemoOptions()) }

// ToolsWith is Tools with the market tools configured by o. Benchmarks and
// the standard workloads use market.Options{} (no injected failures): they
// time the programs, not retry back-offs, and check every run's result.
func ToolsWith(o market.Options) []*tools.Tool {
	return append(append(expense.Tools(), Ping()), market.Tools(o)...)
}
