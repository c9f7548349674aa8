// Package market is the market-report demo toolset: five read-only tools
// over a fixed universe of listings with deterministic, synthetic data (no
// network, no clock), and Program, the report a model would otherwise
// assemble one tool call per turn.
//
// The tools are get_stock_snapshot, get_price_history, get_financials,
// search_news and search_competitors. Every result carries its Source and
// the dataset's time, AsOf. The universe (Tickers) has 58 listings in nine
// sectors, among them AAPL, MSFT, NVDA, TSLA, BRK.B and BF.B.
//
// Tickers are normalized (see Normalize): "brk.b", "BRK-B" and "BRK.B" are
// the same listing, whose canonical form, the one results report, is BRK.B;
// "BF-B" is BF.B. An unknown ticker is E_TOOL_ARGS with a hint naming the
// closest tickers. One listing (HaltedTicker) has no current price: its
// snapshot is an E_TOOL_FAILED error, never a zero price.
//
// get_price_history is deliberately flaky when Options.FlakyRate is set: it
// fails that fraction of calls with a retryable E_TOOL_FAILED (seeded and
// reproducible), to exercise retries. The tool is idempotent, so the broker
// may retry it; a program must still cope with a call that fails after the
// retries, as Program does.
//
// # Limits
//
// Arguments are capped by the schemas (a ticker is at most 16 printable
// characters, a query at most 200 characters, max_results 1 to 10), every
// result has an OutputBudget, and the per-argument counters of the flaky
// tool are bounded by the universe and the closed set of periods.
package market

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/tools"
)

// Program is the market-report program: its input is the watchlist (an array
// of tickers), its result a compact Report (see Reference).
//
//go:embed program.js
var Program string

// Options configures a toolset. The zero value injects no failures.
type Options struct {
	// FlakyRate is the fraction of get_price_history calls that fail with a
	// retryable (transient) E_TOOL_FAILED, from 0 to 1. If zero, none fail.
	FlakyRate float64
	// Seed chooses which calls fail: the n-th call with the same arguments
	// fails if a hash of (Seed, ticker, period, n) falls under FlakyRate, so a
	// toolset fails the same calls, in the same order, whatever the
	// concurrency of the callers.
	Seed uint64
}

// Demo defaults: the toolset of `--demo` and `sandcall demo market` fails
// 10% of get_price_history calls, seeded.
const (
	DemoFlakyRate = 0.1
	DemoSeed      = 1
)

// DemoOptions returns the options of the demo toolset.
func DemoOptions() Options { return Options{FlakyRate: DemoFlakyRate, Seed: DemoSeed} }

// TickerArgs are the arguments of get_stock_snapshot, get_financials and
// search_competitors.
type TickerArgs struct {
	Ticker string `json:"ticker" minLength:"1" maxLength:"16" pattern:"^[ -~]+$" jsonschema:"ticker symbol, e.g. AAPL or BRK.B (case and surrounding space ignored; BRK-B, BRK/B and brk.b are BRK.B)"`
}

// HistoryArgs are the arguments of get_price_history.
type HistoryArgs struct {
	Ticker string `json:"ticker" minLength:"1" maxLength:"16" pattern:"^[ -~]+$" jsonschema:"ticker symbol, e.g. AAPL or BRK.B (case and surrounding space ignored)"`
	Period string `json:"period" enum:"1d,5d,1mo,3mo,6mo,1y" jsonschema:"how far back: 1d, 5d, 1mo (21 sessions), 3mo (63), 6mo (126) or 1y (252); the first bar is the close before the period, the base of its return"`
}

// NewsArgs are the arguments of search_news.
type NewsArgs struct {
	Query      string `json:"query" minLength:"1" maxLength:"200" pattern:"^[^\\x00-\\x1f]+$" jsonschema:"words to search for: a ticker (AAPL), a company name (Apple) or topic words (oil inventories)"`
	MaxResults int    `json:"max_results,omitempty" minimum:"1" maximum:"10" jsonschema:"how many articles to return, 1 to 10; default 5"`
}

// History is the result of get_price_history.
type History struct {
	Ticker   string `json:"ticker" jsonschema:"canonical ticker"`
	Period   string `json:"period" jsonschema:"the period asked for"`
	Currency string `json:"currency" jsonschema:"currency of prices (always USD)"`
	Bars     []Bar  `json:"bars" jsonschema:"daily sessions, oldest first"`
	Source   string `json:"source" jsonschema:"data source"`
	AsOf     string `json:"as_of" jsonschema:"time of the data, RFC 3339 UTC"`
}

var effects = tools.Effects{ReadOnly: true, Idempotent: true}

// histories caches encoded get_price_history results by ticker|period: the
// keys are validated, so it holds at most len(universe) × 6 entries (about
// 3 MB). The data never changes; callers get copies.
var histories sync.Map

// Output budgets: well above the largest result of each tool.
const (
	snapshotBudget    = 2 << 10
	historyBudget     = 48 << 10
	financialsBudget  = 2 << 10
	newsBudget        = 8 << 10
	competitorsBudget = 4 << 10
)

// lookup normalizes and validates a ticker argument.
func lookup(ticker string) (*company, error) {
	s, ok := Normalize(ticker)
	if ok {
		return bySymbol[s], nil
	}
	return nil, tools.ArgError("/ticker", fmt.Sprintf("unknown ticker %q: not in the market universe", ticker),
		"Closest tickers: "+strings.Join(closest(s, 3), ", ")+
			". Tickers are symbols such as AAPL or BRK.B; search_news finds a company by name, search_competitors lists a sector.")
}

// Tools returns the five tools of the market toolset, new on each call (so
// that each catalog owns its tools and its flaky-call counters). It panics if
// o.FlakyRate is not within [0, 1].
func Tools(o Options) []*tools.Tool {
	if !(o.FlakyRate >= 0 && o.FlakyRate <= 1) {
		panic(fmt.Sprintf("market: FlakyRate %v is not within [0, 1]", o.FlakyRate))
	}
	fl := &flaky{rate: o.FlakyRate, seed: o.Seed, calls: map[string]uint64{}}

	snapshotTool := tools.MustFunc(tools.Tool{
		Name:         "get_stock_snapshot",
		OutputSchema: outputSchema[Snapshot](),
		Title:        "Stock snapshot",
		Description: "What is a stock's latest price and how did it move? Returns {ticker, name, sector, price, change, change_pct, " +
			"volume, market_cap, pe_ratio (null when earnings are negative), summary, source, as_of} for one ticker at the last close.\n" +
			"Use when you need the current price, the day's move or the size of a company. A listing without a current price " +
			"(e.g. trading halted) is an E_TOOL_FAILED error, never a zero price. " +
			"Do not use for past prices (use get_price_history), earnings detail (use get_financials) or peers (use search_competitors instead).",
		Effects:      effects,
		OutputBudget: snapshotBudget,
	}, func(ctx context.Context, in TickerArgs) (Snapshot, error) {
		c, err := lookup(in.Ticker)
		if err != nil {
			return Snapshot{}, err
		}
		s, missing := snapshot(c)
		if missing != nil {
			return Snapshot{}, missing.toolError()
		}
		return s, nil
	})

	historyTool := tools.MustFunc(tools.Tool{
		Name:         "get_price_history",
		OutputSchema: outputSchema[History](),
		Title:        "Daily price history",
		Description: "How did a stock's price move over a period? Returns {ticker, period, currency, bars: [{date, open, high, low, close, volume}], " +
			"source, as_of}, oldest bar first; period is one of 1d, 5d, 1mo, 3mo, 6mo, 1y (1y: 253 bars, about 25 KB).\n" +
			"Use when computing returns, volatility or ranges. The service is occasionally unavailable: a retryable E_TOOL_FAILED, " +
			"worth one more try. Do not use for the latest price alone (use get_stock_snapshot instead, far smaller).",
		Effects:      effects,
		OutputBudget: historyBudget,
	}, func(ctx context.Context, in HistoryArgs) (tools.Encoded[History], error) {
		c, err := lookup(in.Ticker)
		if err != nil {
			return nil, err
		}
		key := c.Ticker + "|" + in.Period
		if err := fl.call(key); err != nil {
			return nil, err
		}
		if b, ok := histories.Load(key); ok {
			return bytes.Clone(b.([]byte)), nil
		}
		bs := periodBars(c, in.Period)
		if len(bs) < 2 { // the base close alone, or nothing: no session in the period
			all := bars(c)
			return nil, tools.Unavailable(fmt.Sprintf("no sessions of %s in the last %s: trading was halted after %s", c.Ticker, in.Period, all[len(all)-1].Date),
				"Ask for a longer period to see the closes before the halt.")
		}
		b, err := tools.Encode(History{Ticker: c.Ticker, Period: in.Period, Currency: Currency, Bars: bs, Source: Source, AsOf: AsOf})
		if err != nil {
			return nil, err
		}
		histories.Store(key, []byte(b))
		return bytes.Clone(b), nil
	})

	financialsTool := tools.MustFunc(tools.Tool{
		Name:         "get_financials",
		OutputSchema: outputSchema[Financials](),
		Title:        "Company financials",
		Description: "How profitable and indebted is a company? Returns trailing twelve-month {revenue, gross_profit, operating_income, " +
			"net_income, eps, margins in percent, free_cash_flow, cash, debt, shares_outstanding, source, as_of} for one ticker.\n" +
			"Use when judging earnings, margins or the balance sheet. " +
			"Do not use for prices or valuation at the last close (use get_stock_snapshot instead, which has the P/E).",
		Effects:      effects,
		OutputBudget: financialsBudget,
	}, func(ctx context.Context, in TickerArgs) (Financials, error) {
		c, err := lookup(in.Ticker)
		if err != nil {
			return Financials{}, err
		}
		return financials(c), nil
	})

	newsTool := tools.MustFunc(tools.Tool{
		Name:         "search_news",
		OutputSchema: outputSchema[News](),
		Title:        "Search market news",
		Description: "What is the news about a company, ticker or topic? Returns {query, results: [{headline, source, date, relevance, " +
			"tickers, key_points}], total_matches, source, as_of}, most relevant first; results is empty when nothing matches.\n" +
			"Use when explaining a move or looking for recent events; for one headline per ticker pass the ticker and max_results 1. " +
			"Do not use for prices or figures (use get_stock_snapshot or get_financials instead).",
		Effects:      effects,
		OutputBudget: newsBudget,
	}, func(ctx context.Context, in NewsArgs) (News, error) {
		n := in.MaxResults
		if n == 0 {
			n = 5
		}
		res, ok := searchNews(in.Query, n)
		if !ok {
			return News{}, tools.ArgError("/query", fmt.Sprintf("the query %q has no searchable words", in.Query),
				"Search for a ticker (AAPL), a company name (Apple) or topic words (oil inventories).")
		}
		return res, nil
	})

	competitorsTool := tools.MustFunc(tools.Tool{
		Name:         "search_competitors",
		OutputSchema: outputSchema[Competitors](),
		Title:        "Competitors of a company",
		Description: "Which companies compete with a given one? Returns {ticker, sector, competitors: [{ticker, name, market_cap}], source, as_of}: " +
			"the other listings of its sector, closest in market capitalization first.\n" +
			"Use when comparing a company with its peers. " +
			"Do not use for the company's own figures (use get_stock_snapshot or get_financials instead).",
		Effects:      effects,
		OutputBudget: competitorsBudget,
	}, func(ctx context.Context, in TickerArgs) (Competitors, error) {
		c, err := lookup(in.Ticker)
		if err != nil {
			return Competitors{}, err
		}
		return competitors(c), nil
	})

	aapl := bySymbol["AAPL"]
	snap, _ := snapshot(aapl)
	hist := History{Ticker: "AAPL", Period: "5d", Currency: Currency, Bars: periodBars(aapl, "5d")[:2], Source: Source, AsOf: AsOf}
	news, _ := searchNews("AAPL", 1)
	comp := competitors(bySymbol["BRK.B"])
	comp.Competitors = comp.Competitors[:2]
	snapshotTool.Examples = []tools.Example{example(`{"ticker":"aapl"}`, snap, "")}
	historyTool.Examples = []tools.Example{example(`{"ticker":"AAPL","period":"5d"}`, hist, "the first 2 of 6 bars")}
	financialsTool.Examples = []tools.Example{example(`{"ticker":"MSFT"}`, financials(bySymbol["MSFT"]), "")}
	newsTool.Examples = []tools.Example{example(`{"query":"AAPL","max_results":1}`, news, "")}
	competitorsTool.Examples = []tools.Example{example(`{"ticker":"BRK-B"}`, comp, "the first 2 competitors")}
	return []*tools.Tool{snapshotTool, historyTool, financialsTool, newsTool, competitorsTool}
}

// outputSchema is the inferred schema of T with every array non-null: the
// tools never return a null list (an empty one at most).
func outputSchema[T any]() *jsonschema.Schema {
	s, err := tools.SchemaFor(reflect.TypeFor[T]())
	if err != nil {
		panic(err)
	}
	var walk func(*jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil {
			return
		}
		if slices.Equal(s.Types, []string{"null", "array"}) {
			s.Type, s.Types = "array", nil
		}
		walk(s.Items)
		for _, p := range s.Properties {
			walk(p)
		}
	}
	walk(s)
	return s
}

func example(args string, result any, shown string) tools.Example {
	b, err := tools.Encode(result)
	if err != nil {
		panic(err)
	}
	d := "Real call and result"
	if shown != "" {
		d += " (" + shown + " shown)"
	}
	return tools.Example{Description: d + ".", Args: json.RawMessage(args), Result: json.RawMessage(b)}
}

func (e *errNoPrice) toolError() error {
	return tools.Unavailable(
		fmt.Sprintf("no current price for %s: trading halted on %s (last close $%.2f on %s)", e.ticker, e.haltedOn, e.lastClose, e.lastDate),
		"Report the ticker as unavailable; get_price_history with a period of 1mo or more has the closes before the halt.")
}

// flaky injects transient failures: the n-th call with a given key fails if
// fails(seed, key, n) says so. Keys are validated (ticker|period), so the
// map is bounded by the universe times the periods.
type flaky struct {
	rate float64
	seed uint64

	mu    sync.Mutex
	calls map[string]uint64 // key → calls made so far
}

func (f *flaky) call(key string) error {
	if f.rate == 0 {
		return nil
	}
	f.mu.Lock()
	n := f.calls[key]
	f.calls[key] = n + 1
	f.mu.Unlock()
	if !fails(f.seed, f.rate, key, n) {
		return nil
	}
	return tools.Transient("the price-history service did not answer in time (a simulated, transient failure)",
		"Retry the call: it is idempotent and usually succeeds the next time.")
}

// fails reports whether the n-th call (from 0) with key fails under seed and
// rate.
func fails(seed uint64, rate float64, key string, n uint64) bool {
	r := rng(seed ^ fnv64(key) ^ (n+1)*0x9e3779b97f4a7c15)
	r.next()
	return r.float() < rate
}
