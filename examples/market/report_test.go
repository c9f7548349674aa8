package market

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// recorder wraps tools' handlers to record, per get_price_history ticker,
// whether each attempt failed, and the bytes of every successful result.
type recorder struct {
	mu       sync.Mutex
	attempts map[string][]bool // canonical ticker → failed?, in order
	bytes    int
	calls    int
}

func (rec *recorder) wrap(ts []*tools.Tool) []*tools.Tool {
	rec.attempts = map[string][]bool{}
	out := make([]*tools.Tool, len(ts))
	for i, t := range ts {
		c := *t
		h := t.Handler
		c.Handler = func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			res, err := h(ctx, args)
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if c.Name == "get_price_history" {
				var in HistoryArgs
				_ = json.Unmarshal(args, &in)
				k, _ := Normalize(in.Ticker)
				rec.attempts[k] = append(rec.attempts[k], err != nil)
			}
			if err == nil {
				rec.calls++
				rec.bytes += len(res)
			}
			return res, err
		}
		out[i] = &c
	}
	return out
}

func runner(tb testing.TB, ts []*tools.Tool) *bindings.Runner {
	tb.Helper()
	cat, err := tools.NewCatalog(ts...)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		tb.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{}), Tier: "inprocess"})
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func runProgram(tb testing.TB, r *bindings.Runner, input json.RawMessage) *sandbox.Result {
	tb.Helper()
	return r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Source: Program, Input: input}})
}

// expected is one row of the report computed in the test, from the data
// functions, independently of Program and of Reference.
type expected struct {
	ticker      string
	price, chg  float64
	ret, vol    float64
	headline    string
	unavailable bool
}

func expect(t *testing.T, list []string) map[string]expected {
	t.Helper()
	out := map[string]expected{}
	for _, in := range list {
		c := bySymbol[strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(in), "-", "."))]
		if c == nil {
			t.Fatalf("test watchlist has unknown ticker %q", in)
		}
		all := bars(c)
		if len(all) < Sessions {
			out[c.Ticker] = expected{ticker: c.Ticker, unavailable: true}
			continue
		}
		last, prev := all[len(all)-1], all[len(all)-2]
		e := expected{ticker: c.Ticker, price: last.Close, chg: math.Round((last.Close/prev.Close-1)*100*100) / 100}
		// Return and volatility over the year, straight from the closes.
		first := all[0].Close
		var rs []float64
		for i := 1; i < len(all); i++ {
			rs = append(rs, all[i].Close/all[i-1].Close-1)
		}
		mean := 0.0
		for _, r := range rs {
			mean += r
		}
		mean /= float64(len(rs))
		v := 0.0
		for _, r := range rs {
			v += (r - mean) * (r - mean)
		}
		e.ret = (last.Close/first - 1) * 100
		e.vol = math.Sqrt(v/float64(len(rs)-1)) * math.Sqrt(252) * 100
		// The headline: the newest article about the ticker (ties: generation order).
		var best *article
		for i, a := range articles() {
			if slices.Contains(a.Tickers, c.Ticker) && (best == nil || a.session > best.session) {
				best = &articles()[i]
			}
		}
		e.headline = best.Headline
		out[c.Ticker] = e
	}
	return out
}

// near reports whether got is want rounded to 1 decimal (allowing for the
// last bits of a different summation order before rounding).
func near(got *float64, want float64) bool {
	return got != nil && math.Abs(*got-want) <= 0.05+1e-9
}

// checkReport checks rep against values computed in the test. failedHistory
// lists the tickers whose history may be missing (all their attempts
// failed).
func checkReport(t *testing.T, rep Report, list []string, failedHistory map[string]bool) {
	t.Helper()
	want := expect(t, list)
	if rep.AsOf == nil || *rep.AsOf != AsOf || rep.Source == nil || *rep.Source != Source {
		t.Errorf("as_of %v, source %v", rep.AsOf, rep.Source)
	}
	var rows []expected
	for _, in := range list {
		n, _ := Normalize(in)
		if !want[n].unavailable {
			rows = append(rows, want[n])
		}
	}
	if len(rep.Rows) != len(rows) {
		t.Fatalf("%d rows, want %d", len(rep.Rows), len(rows))
	}
	for i, w := range rows {
		g := rep.Rows[i]
		if g.Ticker != w.ticker || g.Price != w.price || g.ChgPct != w.chg || g.Headline == nil || *g.Headline != w.headline {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
		if failedHistory[w.ticker] {
			if g.RetPct != nil || g.VolPct != nil {
				t.Errorf("%s: history failed, yet ret %v vol %v", w.ticker, *g.RetPct, *g.VolPct)
			}
			continue
		}
		if !near(g.RetPct, w.ret) || !near(g.VolPct, w.vol) {
			t.Errorf("%s: return %v, volatility %v; want %.3f, %.3f", w.ticker, g.RetPct, g.VolPct, w.ret, w.vol)
		}
	}
	// The three biggest absolute moves, and their peers: the same sector,
	// closest in market capitalization.
	sort.SliceStable(rows, func(i, j int) bool { return math.Abs(rows[i].chg) > math.Abs(rows[j].chg) })
	if len(rep.Movers) != 3 {
		t.Fatalf("%d movers, want 3", len(rep.Movers))
	}
	for i, m := range rep.Movers {
		if m.Ticker != rows[i].ticker || m.ChgPct != rows[i].chg || len(m.Peers) != 3 {
			t.Errorf("mover %d: %+v, want %s %v", i, m, rows[i].ticker, rows[i].chg)
			continue
		}
		c := bySymbol[m.Ticker]
		type peer struct {
			ticker string
			ratio  float64
		}
		var ps []peer
		for _, o := range universe {
			if o.Sector == c.Sector && o.Ticker != c.Ticker {
				a, b := float64(lastCap(c)), float64(lastCap(&o))
				ps = append(ps, peer{o.Ticker, max(a, b) / min(a, b)})
			}
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i].ratio < ps[j].ratio })
		for j := range 3 {
			if m.Peers[j] != ps[j].ticker {
				t.Errorf("mover %s: peers %v, want %v", m.Ticker, m.Peers, ps[:3])
				break
			}
		}
	}
	var unavailable []string
	for _, u := range rep.Unavailable {
		unavailable = append(unavailable, u.Ticker)
		if u.Code != string(sandbox.EToolFailed) || !strings.Contains(u.Message, "no current price") {
			t.Errorf("unavailable %+v", u)
		}
	}
	var wantUnavailable []string
	for _, in := range list {
		if n, _ := Normalize(in); want[n].unavailable {
			wantUnavailable = append(wantUnavailable, in)
		}
	}
	if !slices.Equal(unavailable, wantUnavailable) {
		t.Errorf("unavailable %v, want %v", unavailable, wantUnavailable)
	}
}

func TestProgram(t *testing.T) {
	var rec recorder
	r := runner(t, rec.wrap(Tools(Options{})))
	res := runProgram(t, r, WatchlistInput())
	if !res.OK {
		t.Fatalf("program failed: %v", res.Error)
	}
	list := Watchlist()
	if len(list) != 20 || !slices.Contains(list, "BRK.B") || !slices.Contains(list, "BF-B") || !slices.Contains(list, HaltedTicker) {
		t.Errorf("watchlist %v", list)
	}
	if n := len(res.Result); n > 4096 {
		t.Errorf("report is %d bytes, over 4 KB", n)
	}
	if res.Calls.Total != Calls(20) || res.Calls.Total != 63 || res.Calls.Failed != 1 || res.Calls.ByTool["search_competitors"] != 3 {
		t.Errorf("calls %+v, want 63 with 1 failure (the halted snapshot)", res.Calls)
	}
	var rep Report
	if err := json.Unmarshal(res.Result, &rep); err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, list, nil)
	if len(rep.Errors) != 0 {
		t.Errorf("errors %+v, want none", rep.Errors)
	}
	// Reference (the bench's expected result) is the program's result, byte for byte.
	if ref := ReferenceJSON(list); string(res.Result) != string(ref) {
		t.Errorf("program result and Reference differ:\n%s\n%s", res.Result, ref)
	}
	// What the program read is what a one-call-per-turn agent would read.
	d, err := MeasureDirect(context.Background(), Tools(Options{}), list)
	if err != nil {
		t.Fatal(err)
	}
	if d.Calls != rec.calls || d.Bytes != rec.bytes || d.Calls != 62 || d.PrettyBytes <= d.Bytes {
		t.Errorf("MeasureDirect %+v; the program read %d results, %d bytes", d, rec.calls, rec.bytes)
	}
	if d.Bytes < 50*len(res.Result) {
		t.Errorf("raw results %d bytes, report %d: want the report at least 50x smaller", d.Bytes, len(res.Result))
	}
}

// Under the demo's flaky history tool, the report is still right: a ticker
// whose every history attempt failed is listed in errors with null
// statistics, the others have theirs.
func TestProgramFlaky(t *testing.T) {
	list := Watchlist()
	// The demo seed must exercise the retry path on this watchlist.
	flaky := 0
	for _, tk := range list {
		n, _ := Normalize(tk)
		if fails(DemoSeed, DemoFlakyRate, n+"|1y", 0) {
			flaky++
		}
	}
	if flaky == 0 {
		t.Fatal("with the demo seed no first history call of the watchlist fails: pick another seed")
	}
	for run := range 3 { // the same toolset: later runs make later attempts
		var rec recorder
		r := runner(t, rec.wrap(Tools(DemoOptions())))
		for range run {
			runProgram(t, r, WatchlistInput())
		}
		rec.attempts = map[string][]bool{}
		res := runProgram(t, r, WatchlistInput())
		if !res.OK {
			t.Fatalf("program failed: %v", res.Error)
		}
		var rep Report
		if err := json.Unmarshal(res.Result, &rep); err != nil {
			t.Fatal(err)
		}
		failed := map[string]bool{}
		for k, att := range rec.attempts {
			if !slices.Contains(att, false) {
				failed[k] = true
			}
		}
		checkReport(t, rep, list, failed)
		var reported []string
		for _, e := range rep.Errors {
			reported = append(reported, e.Ticker)
			if e.Tool != "get_price_history" || e.Code != string(sandbox.EToolFailed) || !e.Retryable {
				t.Errorf("error %+v, want a retryable get_price_history failure", e)
			}
		}
		for _, tk := range reported {
			if !failed[tk] {
				t.Errorf("%s reported failed, but an attempt succeeded: %v", tk, rec.attempts[tk])
			}
		}
		if len(reported) != len(failed) {
			t.Errorf("reported failures %v, want %v", reported, failed)
		}
		if len(res.Result) > 4096 {
			t.Errorf("report is %d bytes", len(res.Result))
		}
	}
}

func TestProgramInput(t *testing.T) {
	r := runner(t, Tools(Options{}))
	for _, in := range []string{``, `null`, `[]`, `{"watchlist":"AAPL"}`} {
		res := runProgram(t, r, json.RawMessage(in))
		if res.OK || res.Error.Code != sandbox.EGuestError || !strings.Contains(res.Error.Message, "watchlist") {
			t.Errorf("input %q: %+v", in, res.Error)
		}
	}
	// An unknown ticker is listed as unavailable, with the tool's code; a
	// watchlist of one still has a mover.
	res := runProgram(t, r, json.RawMessage(`{"watchlist":["nvda","NOPE"]}`))
	if !res.OK {
		t.Fatal(res.Error)
	}
	var rep Report
	if err := json.Unmarshal(res.Result, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 || rep.Rows[0].Ticker != "NVDA" || len(rep.Unavailable) != 1 || rep.Unavailable[0].Code != "E_TOOL_ARGS" ||
		len(rep.Movers) != 1 {
		t.Errorf("report %s", res.Result)
	}
	if ref := ReferenceJSON([]string{"nvda", "NOPE"}); string(ref) != string(res.Result) {
		t.Errorf("Reference:\n%s\nprogram:\n%s", ref, res.Result)
	}
}

// BenchmarkProgram is the warm run in-process: the program compiled once and
// cached, the tools' data generated; every run makes its 63 calls and gets
// fresh values for all results. raw-B/op is what a one-call-per-turn agent
// would read, result-B/op what the program returns.
func BenchmarkProgram(b *testing.B) {
	var rec recorder
	r := runner(b, rec.wrap(Tools(Options{})))
	want := string(ReferenceJSON(Watchlist()))
	in := WatchlistInput()
	check := func() int {
		res := runProgram(b, r, in)
		if !res.OK || string(res.Result) != want {
			b.Fatalf("wrong result: %v %.80s", res.Error, res.Result)
		}
		return len(res.Result)
	}
	check()
	rec.bytes = 0
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		n = check()
	}
	b.ReportMetric(float64(rec.bytes)/float64(b.N), "raw-B/op")
	b.ReportMetric(float64(n), "result-B/op")
}
