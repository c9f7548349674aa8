package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/examples/market"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

const demoExamples = `  # who went over their Q3 travel budget? one program, 56 tool calls, one small result
  sandcall demo
  sandcall demo expense
  # a market report on 20 tickers: 63 tool calls, ~500 KB of results, a 3 KB report
  sandcall demo market
  # a prompt injection in a support inbox, without and with an information-flow rule
  sandcall demo inbox
  # programs as tools, a plan refused before it runs, state kept between runs
  sandcall demo programs
`

func cmdDemo(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "demo", "[--isolation process|inprocess] [expense|market|inbox|programs]", demoExamples)
	c := common{timeout: sandbox.DefaultLimits().Timeout, logLevel: "warn", oneShot: true}
	fs.StringVar(&c.isolation, "isolation", "process", "isolation tier: process (worker processes) or inprocess")
	c.registerPolicy(fs)
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	which := "expense"
	switch len(pos) {
	case 0:
	case 1:
		which = pos[0]
	default:
		return usageErr(e, fs, "want at most one demo name")
	}
	if msg := c.loadConfig(fs); msg != "" {
		fmt.Fprintf(e.stderr, "sandcall demo: %s\n", msg)
		return exitUsage
	}
	if msg := c.check(); msg != "" {
		return usageErr(e, fs, "%s", msg)
	}
	switch which {
	case "expense":
		return demoExpense(ctx, e, &c)
	case "market":
		return demoMarket(ctx, e, &c)
	case "inbox":
		return demoInbox(ctx, e, &c)
	case "programs": // demo_programs.go
		return demoPrograms(ctx, e, &c)
	default:
		return usageErr(e, fs, "unknown demo %q: want expense, market, inbox or programs", which)
	}
}

// meter counts the tool results a one-call-per-turn agent would have read:
// every result a demo tool returns during this run, compact as returned and
// pretty-printed (two-space indent, like JSON.stringify(v, null, 2)).
type meter struct {
	calls, compact, pretty atomic.Int64
	transient              atomic.Int64 // retryable failures returned by the tools
}

func (m *meter) wrap(ts []*tools.Tool) []*tools.Tool {
	out := make([]*tools.Tool, len(ts))
	for i, t := range ts {
		c := *t
		h := t.Handler
		c.Handler = func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			res, err := h(ctx, args)
			if se, ok := err.(*sandbox.Error); ok && se.Retryable {
				m.transient.Add(1)
			}
			if err == nil {
				m.calls.Add(1)
				m.compact.Add(int64(len(res)))
				var b bytes.Buffer
				if json.Indent(&b, res, "", "  ") == nil {
					m.pretty.Add(int64(b.Len()))
				} else {
					m.pretty.Add(int64(len(res)))
				}
			}
			return res, err
		}
		out[i] = &c
	}
	return out
}

// runDemo runs prog against the demo toolsets, metering every raw tool
// result; ok is false (and the error printed) when the run failed.
func runDemo(ctx context.Context, e *env, c *common, prog sandbox.Program) (res *sandbox.Result, m *meter, ok bool) {
	m = new(meter)
	runner, closeRunner, err := newRunner(m.wrap(demo.Tools()), c, nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall demo: %v\n", err)
		return nil, nil, false
	}
	defer closeRunner()
	res = runner.Run(ctx, bindings.RunRequest{Program: prog})
	if !res.OK {
		printError(e.stderr, res.Error)
		return nil, nil, false
	}
	return res, m, true
}

func demoExpense(ctx context.Context, e *env, c *common) int {
	res, m, ok := runDemo(ctx, e, c, sandbox.Program{Source: expense.Program})
	if !ok {
		return exitFailure
	}
	w := e.stdout
	fmt.Fprintln(w, "Expense check: who went over their Q3 travel budget? (engineering, 50 people)")
	fmt.Fprintln(w)
	if err := printOverBudget(w, res.Result); err != nil {
		fmt.Fprintf(e.stderr, "sandcall demo: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "The program made %d tool calls (%s) in %s, isolation: %s.\n", res.Calls.Total, byTool(res.Calls.ByTool),
		time.Duration(res.DurationMS*float64(time.Millisecond)).Round(time.Millisecond/10), res.Tier)
	fmt.Fprintln(w)

	prog, result := int64(len(expense.Program)), int64(len(res.Result))
	sent := printContext(w, m, prog, result)
	if sent > 0 && result > 0 {
		fmt.Fprintf(w, "  → %.0f× less context (%.0f× counting the result alone)\n",
			float64(m.compact.Load())/float64(sent), float64(m.compact.Load())/float64(result))
	}
	return exitOK
}

// demoMarket runs the market-report program on the demo watchlist, against
// the demo toolset (whose get_price_history fails 10% of calls transiently,
// seeded, for the broker to retry).
func demoMarket(ctx context.Context, e *env, c *common) int {
	list := market.Watchlist()
	res, m, ok := runDemo(ctx, e, c, sandbox.Program{Source: market.Program, Input: market.WatchlistInput()})
	if !ok {
		return exitFailure
	}
	var rep market.Report
	if err := json.Unmarshal(res.Result, &rep); err != nil {
		fmt.Fprintf(e.stderr, "sandcall demo: unexpected result shape: %v\n", err)
		return exitFailure
	}
	w := e.stdout
	fmt.Fprintf(w, "Market report: %d tickers (last close, one-year return and volatility, top headline; peers of the 3 biggest movers)\n", len(list))
	if rep.AsOf != nil && rep.Source != nil {
		fmt.Fprintf(w, "As of %s, %s\n", *rep.AsOf, *rep.Source)
	}
	fmt.Fprintln(w)
	printMarketReport(w, rep)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "The program made %d tool calls (%s) in %s, isolation: %s.\n", res.Calls.Total, byTool(res.Calls.ByTool),
		time.Duration(res.DurationMS*float64(time.Millisecond)).Round(time.Millisecond/10), res.Tier)
	fmt.Fprintf(w, "Transient tool failures: %d (10%% of get_price_history calls fail by design, seeded); the broker retried %d; "+
		"calls that failed for good: %d (listed above).\n", m.transient.Load(), res.Calls.Retries, res.Calls.Failed)
	fmt.Fprintln(w)

	prog, result := int64(len(market.Program)), int64(len(res.Result))
	sent := printContext(w, m, prog, result)
	if result > 0 {
		fmt.Fprintf(w, "  → a one-call-per-turn agent would have read %s bytes of raw results; this program returned %s bytes (%.0f× less; %.0f× counting the program too)\n",
			comma(m.compact.Load()), comma(result), float64(m.compact.Load())/float64(result), float64(m.compact.Load())/float64(sent))
	}
	return exitOK
}

// printContext prints the context a model reads, one tool call per turn
// (the meter's figures) against a program of prog bytes that returned
// result bytes, and returns what the program costs (prog + result).
func printContext(w io.Writer, m *meter, prog, result int64) (sent int64) {
	sent = prog + result
	fmt.Fprintln(w, "Context the model reads (measured during this run):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  one tool call per turn:\t%d raw tool results\t%s bytes of compact JSON (%s pretty-printed)\n",
		m.calls.Load(), comma(m.compact.Load()), comma(m.pretty.Load()))
	fmt.Fprintf(tw, "  sandcall run_code:\tprogram + result\t%s bytes (%s + %s)\n", comma(sent), comma(prog), comma(result))
	tw.Flush()
	return sent
}

func printMarketReport(w io.Writer, rep market.Report) {
	num := func(p *float64) string {
		if p == nil {
			return "n/a"
		}
		return strconv.FormatFloat(*p, 'f', 1, 64)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TICKER\tPRICE\tCHG %\t1Y RET %\tVOL %\t  HEADLINE")
	for _, r := range rep.Rows {
		h := "n/a"
		if r.Headline != nil {
			h = *r.Headline
		}
		fmt.Fprintf(tw, "%s\t%s\t%+.2f\t%s\t%s\t  %s\n", r.Ticker, money(r.Price), r.ChgPct, num(r.RetPct), num(r.VolPct), h)
	}
	tw.Flush()
	if len(rep.Movers) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Biggest movers and their closest peers (same sector, nearest market cap):")
		for _, mv := range rep.Movers {
			peers := "n/a (search_competitors failed)"
			if mv.Peers != nil {
				peers = strings.Join(mv.Peers, ", ")
			}
			fmt.Fprintf(w, "  %-6s %+6.2f%%  peers: %s\n", mv.Ticker, mv.ChgPct, peers)
		}
	}
	if len(rep.Unavailable) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Unavailable:")
		for _, u := range rep.Unavailable {
			fmt.Fprintf(w, "  %-6s %s: %s\n", u.Ticker, u.Code, u.Message)
		}
	}
	if len(rep.Errors) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Failed calls (after the broker's retries; the report shows n/a):")
		for _, ce := range rep.Errors {
			fmt.Fprintf(w, "  %-6s %s: %s (retryable: %v)\n", ce.Ticker, ce.Tool, ce.Code, ce.Retryable)
		}
	}
}

// overBudget is one row of the expense program's result.
type overBudget struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Level       string  `json:"level"`
	TravelTotal float64 `json:"travel_total"`
	TravelLimit float64 `json:"travel_limit"`
	OverBy      float64 `json:"over_by"`
}

func printOverBudget(w io.Writer, result json.RawMessage) error {
	var rows []overBudget
	if err := json.Unmarshal(result, &rows); err != nil {
		return fmt.Errorf("unexpected result shape: %v", err)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ID\tNAME\tLEVEL\tTRAVEL\tLIMIT\tOVER BY\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", r.ID, r.Name, r.Level, money(r.TravelTotal), money(r.TravelLimit), money(r.OverBy))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d people over budget.\n", len(rows))
	return nil
}

func money(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	intPart, frac := s[:len(s)-3], s[len(s)-3:]
	neg := ""
	if intPart != "" && intPart[0] == '-' {
		neg, intPart = "-", intPart[1:]
	}
	var b []byte
	for i := range len(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, intPart[i])
	}
	return neg + string(b) + frac
}

func comma(n int64) string {
	s := money(float64(n))
	return s[:len(s)-3]
}

func byTool(m map[string]int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	var b bytes.Buffer
	for i, k := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d× %s", m[k], k)
	}
	return b.String()
}
