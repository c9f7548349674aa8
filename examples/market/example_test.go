package market_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sandcall/sandcall/examples/market"
	"github.com/sandcall/sandcall/tools"
)

// Tickers as a user writes them, and their canonical form.
func ExampleNormalize() {
	for _, s := range []string{"brk.b", "BRK-B", " bf-b ", "BF.B", "msft", "APPL"} {
		c, ok := market.Normalize(s)
		fmt.Printf("%q → %s %v\n", s, c, ok)
	}
	// Output:
	// "brk.b" → BRK.B true
	// "BRK-B" → BRK.B true
	// " bf-b " → BF.B true
	// "BF.B" → BF.B true
	// "msft" → MSFT true
	// "APPL" → APPL false
}

// The toolset, and calls as a program would make them: a class share in
// another spelling, an unknown ticker, and the listing without a price.
func ExampleTools() {
	c, err := tools.NewCatalog(market.Tools(market.Options{})...)
	if err != nil {
		panic(err)
	}
	for _, t := range c.List() {
		fmt.Println(t.Name)
	}
	snap, _ := c.Lookup("get_stock_snapshot")
	res, err := snap.Call(context.Background(), json.RawMessage(`{"ticker":"brk-b"}`))
	var s market.Snapshot
	_ = json.Unmarshal(res, &s)
	fmt.Println(s.Ticker, s.Name, s.Price > 0, s.AsOf, err)
	_, err = snap.Call(context.Background(), json.RawMessage(`{"ticker":"APPL"}`))
	fmt.Println(err)
	_, err = snap.Call(context.Background(), json.RawMessage(`{"ticker":"ACME"}`))
	fmt.Println(err)
	// Output:
	// get_financials
	// get_price_history
	// get_stock_snapshot
	// search_competitors
	// search_news
	// BRK.B Berkshire Hathaway Inc. Class B true 2026-11-27T21:00:00Z <nil>
	// E_TOOL_ARGS: unknown ticker "APPL": not in the market universe
	// E_TOOL_FAILED: no current price for ACME: trading halted on 2026-11-20 (last close $87.44 on 2026-11-19)
}

// The report for the demo watchlist, computed in Go: what Program returns.
func ExampleReference() {
	rep := market.Reference(market.Watchlist())
	fmt.Println(len(rep.Rows), "rows,", len(market.ReferenceJSON(market.Watchlist())), "bytes")
	for _, m := range rep.Movers {
		fmt.Printf("%s %+.2f%% peers %v\n", m.Ticker, m.ChgPct, m.Peers)
	}
	fmt.Println("unavailable:", rep.Unavailable[0].Ticker, rep.Unavailable[0].Code)
	// Output:
	// 19 rows, 3040 bytes
	// XOM -5.90% peers [CVX COP SLB]
	// LLY +5.44% peers [ABBV JNJ MRK]
	// META -5.04% peers [GOOGL NFLX DIS]
	// unavailable: ACME E_TOOL_FAILED
}

// What a model would read building the report one tool call per turn,
// against the program's result.
func ExampleMeasureDirect() {
	d, err := market.MeasureDirect(context.Background(), market.Tools(market.Options{}), market.Watchlist())
	if err != nil {
		panic(err)
	}
	n := len(market.ReferenceJSON(market.Watchlist()))
	fmt.Printf("%d calls, %d bytes compact, %d pretty; program result %d bytes (%.0fx less)\n",
		d.Calls, d.Bytes, d.PrettyBytes, n, float64(d.Bytes)/float64(n))
	// Output:
	// 62 calls, 495725 bytes compact, 793456 pretty; program result 3040 bytes (163x less)
}
