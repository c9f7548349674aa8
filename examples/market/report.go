package market

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/sandcall/sandcall/examples/internal/jsmath"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// watchlist is the demo's 20 tickers, written as a user might: BRK.B and
// BF-B as the issue spells them, and the halted listing, which the report
// must list as unavailable.
var watchlist = []string{
	"AAPL", "MSFT", "NVDA", "TSLA", "BRK.B", "BF-B", "AMZN", "GOOGL", "META", "JPM",
	"XOM", "LLY", "UNH", "WMT", "KO", "BA", "NFLX", "AMD", "DIS", HaltedTicker,
}

// Watchlist returns the demo's watchlist of 20 tickers: Program's input in
// `sandcall demo market` and the market benchmark.
func Watchlist() []string { return append([]string(nil), watchlist...) }

// WatchlistInput returns Watchlist as Program's input (a JSON array).
func WatchlistInput() json.RawMessage {
	b, _ := json.Marshal(watchlist)
	return b
}

// Calls is the number of tool calls Program makes for a watchlist of n
// tickers, at least 3 of them with a snapshot: a snapshot, a year of history
// and a headline per ticker, and the competitors of the three biggest
// movers.
func Calls(n int) int { return 3*n + 3 }

// Report is Program's result.
type Report struct {
	AsOf        *string       `json:"as_of"`
	Source      *string       `json:"source"`
	Rows        []Row         `json:"rows"`
	Movers      []Mover       `json:"movers"`
	Unavailable []Unavailable `json:"unavailable"`
	Errors      []CallError   `json:"errors"`
}

// Row is one ticker of the report.
type Row struct {
	Ticker string  `json:"ticker"`
	Price  float64 `json:"price"`
	// ChgPct is the day's change in percent, as the snapshot reports it.
	ChgPct float64 `json:"chg_pct"`
	// RetPct and VolPct are the one-year return and the annualized
	// volatility (sample deviation of daily returns times √252), in percent,
	// rounded to 1 decimal; null if the history failed.
	RetPct   *float64 `json:"ret_1y_pct"`
	VolPct   *float64 `json:"vol_pct"`
	Headline *string  `json:"headline"`
}

// Mover is one of the three biggest absolute moves, with its closest peers
// (null if search_competitors failed).
type Mover struct {
	Ticker string   `json:"ticker"`
	ChgPct float64  `json:"chg_pct"`
	Peers  []string `json:"peers"`
}

// Unavailable is a ticker without a snapshot, and why.
type Unavailable struct {
	Ticker  string `json:"ticker"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// CallError is a failed call (after any retries) that left a row or a mover
// incomplete.
type CallError struct {
	Ticker    string `json:"ticker"`
	Tool      string `json:"tool"`
	Code      string `json:"code"`
	Retryable bool   `json:"retryable"`
}

// YearStats returns the one-year return and annualized volatility of a
// history's bars in percent, rounded to 1 decimal, computed with the same
// floating-point operations in the same order as Program (so the results are
// identical). ok is false for fewer than 3 bars.
func YearStats(bs []Bar) (ret, vol float64, ok bool) {
	if len(bs) < 3 {
		return 0, 0, false
	}
	rs := make([]float64, 0, len(bs)-1)
	sum := 0.0
	for i := 1; i < len(bs); i++ {
		r := bs[i].Close/bs[i-1].Close - 1
		rs = append(rs, r)
		sum += r
	}
	mean := sum / float64(len(rs))
	ss := 0.0
	for _, r := range rs {
		ss += float64((r - mean) * (r - mean))
	}
	ret = round1(float64((bs[len(bs)-1].Close/bs[0].Close - 1) * 100))
	vol = round1(float64(float64(math.Sqrt(ss/float64(len(rs)-1))*math.Sqrt(252)) * 100))
	return ret, vol, true
}

// round1 is Math.round(x * 10) / 10, with -0 written as 0 (as
// JSON.stringify does).
func round1(x float64) float64 {
	r := jsmath.Round(float64(x*10)) / 10
	if r == 0 {
		return 0
	}
	return r
}

// Reference computes Program's report for a watchlist directly in Go from
// the dataset, without tools or a sandbox, assuming no call fails
// transiently (FlakyRate 0).
func Reference(list []string) Report {
	rep := Report{Rows: []Row{}, Movers: []Mover{}, Unavailable: []Unavailable{}, Errors: []CallError{}}
	for _, t := range list {
		c, err := lookup(t)
		if err != nil {
			e := err.(*sandbox.Error)
			rep.Unavailable = append(rep.Unavailable, Unavailable{t, string(e.Code), cut(e.Message, 160)})
			continue
		}
		s, missing := snapshot(c)
		if missing != nil {
			e := missing.toolError().(*sandbox.Error)
			rep.Unavailable = append(rep.Unavailable, Unavailable{t, string(e.Code), cut(e.Message, 160)})
			continue
		}
		if rep.AsOf == nil {
			rep.AsOf, rep.Source = &s.AsOf, &s.Source
		}
		row := Row{Ticker: s.Ticker, Price: s.Price, ChgPct: s.ChangePct}
		if ret, vol, ok := YearStats(periodBars(c, "1y")); ok {
			row.RetPct, row.VolPct = &ret, &vol
		}
		if n, ok := searchNews(t, 1); ok && len(n.Results) > 0 {
			row.Headline = &n.Results[0].Headline
		}
		rep.Rows = append(rep.Rows, row)
	}
	for _, r := range TopMovers(rep.Rows, 3) {
		m := Mover{Ticker: r.Ticker, ChgPct: r.ChgPct, Peers: []string{}}
		for _, p := range competitors(bySymbol[r.Ticker]).Competitors[:3] {
			m.Peers = append(m.Peers, p.Ticker)
		}
		rep.Movers = append(rep.Movers, m)
	}
	return rep
}

// TopMovers returns the n rows with the largest absolute change, ties by
// ticker, as Program orders them.
func TopMovers(rows []Row, n int) []Row {
	top := append([]Row(nil), rows...)
	sort.SliceStable(top, func(i, j int) bool {
		a, b := math.Abs(top[i].ChgPct), math.Abs(top[j].ChgPct)
		if a != b {
			return a > b
		}
		return top[i].Ticker < top[j].Ticker
	})
	return top[:min(n, len(top))]
}

// cut is String.prototype.slice(0, n) for ASCII text.
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// ReferenceJSON is Reference encoded as Program's result is: compact JSON
// without HTML escaping, property order as Program builds it.
func ReferenceJSON(list []string) []byte {
	b, err := tools.Encode(Reference(list))
	if err != nil {
		panic(err) // plain structs: cannot fail
	}
	return b
}

// Direct is the context accounting of the report done without a program:
// one tool call per model turn, every result read by the model.
type Direct struct {
	Calls       int // tool calls made
	Bytes       int // compact JSON of all results
	PrettyBytes int // the same results indented by 2 spaces (JSON.stringify(v, null, 2))
}

// MeasureDirect makes, through ts (as returned by Tools), the calls a model
// would make one per turn to build the report for list: for each ticker its
// snapshot, a year of history and a headline, then the competitors of the
// three biggest movers. It reports what the model would read (failed calls
// are not counted, nor retried).
func MeasureDirect(ctx context.Context, ts []*tools.Tool, list []string) (Direct, error) {
	byName := map[string]*tools.Tool{}
	for _, t := range ts {
		byName[t.Name] = t
	}
	var d Direct
	call := func(name string, args any) error {
		a, err := json.Marshal(args)
		if err != nil {
			return err
		}
		t, ok := byName[name]
		if !ok {
			return fmt.Errorf("market: no tool %q", name)
		}
		res, err := t.Call(ctx, a)
		if err != nil {
			return nil // the model reads the error instead
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, res, "", "  "); err != nil {
			return err
		}
		d.Calls++
		d.Bytes += len(res)
		d.PrettyBytes += pretty.Len()
		return nil
	}
	for _, t := range list {
		for _, c := range []struct {
			name string
			args any
		}{
			{"get_stock_snapshot", TickerArgs{Ticker: t}},
			{"get_price_history", HistoryArgs{Ticker: t, Period: "1y"}},
			{"search_news", NewsArgs{Query: t, MaxResults: 1}},
		} {
			if err := call(c.name, c.args); err != nil {
				return d, err
			}
		}
	}
	for _, m := range Reference(list).Movers {
		if err := call("search_competitors", TickerArgs{Ticker: m.Ticker}); err != nil {
			return d, err
		}
	}
	return d, nil
}
