package market

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

func byName(t testing.TB, o Options) map[string]*tools.Tool {
	t.Helper()
	c, err := tools.NewCatalog(Tools(o)...)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*tools.Tool{}
	for _, tool := range c.List() {
		m[tool.Name] = tool
	}
	return m
}

func call(t testing.TB, tool *tools.Tool, args string) []byte {
	t.Helper()
	res, err := tool.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", tool.Name, args, err)
	}
	return res
}

func toolErr(t *testing.T, err error) *sandbox.Error {
	t.Helper()
	var e *sandbox.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *sandbox.Error", err, err)
	}
	return e
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"AAPL": "AAPL", " aapl ": "AAPL", "\tnvda\n": "NVDA", "brk.b": "BRK.B", "BRK-B": "BRK.B", "BRK/B": "BRK.B",
		"BRK.B": "BRK.B", "BF-B": "BF.B", "bf.b": "BF.B", "Bf-b ": "BF.B", "t": "T", "v": "V",
	} {
		if got, ok := Normalize(in); !ok || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", " ", "BRKB", "BRK B", "BRK..B", "APPL", "AAPL.", "ÄAPL", "MSFT,AAPL"} {
		if got, ok := Normalize(in); ok {
			t.Errorf("Normalize(%q) = %q, ok; want not found", in, got)
		}
	}
}

func TestUniverse(t *testing.T) {
	ts := Tickers()
	if len(ts) < 50 {
		t.Fatalf("%d tickers, want at least 50", len(ts))
	}
	for _, want := range []string{"AAPL", "MSFT", "NVDA", "TSLA", "BRK.B", "BF.B", HaltedTicker} {
		if !slices.Contains(ts, want) {
			t.Errorf("universe lacks %s", want)
		}
	}
	sectors := map[string]int{}
	seen := map[string]bool{}
	for _, c := range universe {
		if seen[c.Ticker] {
			t.Errorf("duplicate ticker %s", c.Ticker)
		}
		seen[c.Ticker] = true
		if n, ok := Normalize(c.Ticker); !ok || n != c.Ticker {
			t.Errorf("%s is not canonical (Normalize gives %s)", c.Ticker, n)
		}
		sectors[c.Sector]++
	}
	for s, n := range sectors {
		if n < 3 {
			t.Errorf("sector %s has %d listings: too few for competitors", s, n)
		}
	}
	if len(sessions) != Sessions || sessions[Sessions-1] != AsOf[:10] {
		t.Fatalf("sessions: %d, last %s", len(sessions), sessions[len(sessions)-1])
	}
	for i, d := range sessions {
		day, err := time.Parse(time.DateOnly, d)
		if err != nil || day.Weekday() == time.Saturday || day.Weekday() == time.Sunday || holidays[d] || i > 0 && d <= sessions[i-1] {
			t.Fatalf("session %d: %s is not a trading day after %s", i, d, sessions[max(i-1, 0)])
		}
	}
	for i := range universe {
		c := &universe[i]
		bs := bars(c)
		want := Sessions
		if c.Ticker == HaltedTicker {
			want = Sessions - haltSessions
		}
		if len(bs) != want {
			t.Errorf("%s: %d bars, want %d", c.Ticker, len(bs), want)
		}
		for j, b := range bs {
			if b.Date != sessions[j] || b.Low <= 0 || b.Low > min(b.Open, b.Close) || b.High < max(b.Open, b.Close) || b.Volume <= 0 {
				t.Fatalf("%s: bad bar %d: %+v", c.Ticker, j, b)
			}
		}
	}
}

func TestSnapshot(t *testing.T) {
	snap := byName(t, Options{})["get_stock_snapshot"]
	for _, c := range universe {
		if c.Ticker == HaltedTicker {
			continue
		}
		res := call(t, snap, fmt.Sprintf(`{"ticker":%q}`, strings.ToLower(c.Ticker)))
		var s Snapshot
		if err := json.Unmarshal(res, &s); err != nil {
			t.Fatal(err)
		}
		bs := bars(&c)
		if s.Ticker != c.Ticker || s.Price != bs[len(bs)-1].Close || s.Price <= 0 || s.Source != Source || s.AsOf != AsOf || s.MarketCap <= 0 {
			t.Errorf("%s: snapshot %+v", c.Ticker, s)
		}
		if want := round2((bs[len(bs)-1].Close/bs[len(bs)-2].Close - 1) * 100); s.ChangePct != want {
			t.Errorf("%s: change_pct %v, want %v", c.Ticker, s.ChangePct, want)
		}
		// P/E is null exactly for the loss-making listings, and null in JSON.
		if (s.PERatio == nil) != c.Loss || c.Loss != strings.Contains(string(res), `"pe_ratio":null`) {
			t.Errorf("%s: pe_ratio %v, loss %v: %s", c.Ticker, s.PERatio, c.Loss, res)
		}
		if !strings.Contains(s.Summary, c.Ticker) || strings.Contains(s.Summary, "\n") {
			t.Errorf("%s: summary %q", c.Ticker, s.Summary)
		}
	}
}

// A missing price is an error, never zero: the halted listing's snapshot
// fails (not retryably), and its history stops at the halt.
func TestMissingPrice(t *testing.T) {
	ts := byName(t, Options{})
	for _, in := range []string{HaltedTicker, strings.ToLower(HaltedTicker) + " "} {
		res, err := ts["get_stock_snapshot"].Call(context.Background(), json.RawMessage(fmt.Sprintf(`{"ticker":%q}`, in)))
		e := toolErr(t, err)
		if res != nil || e.Code != sandbox.EToolFailed || e.Retryable || e.Tool != "get_stock_snapshot" ||
			!strings.Contains(e.Message, "no current price for "+HaltedTicker) || e.Hint == "" {
			t.Errorf("snapshot(%q) = %s, %#v; want a non-retryable E_TOOL_FAILED", in, res, e)
		}
	}
	for _, p := range []string{"1d", "5d"} { // no session since the halt
		_, err := ts["get_price_history"].Call(context.Background(), json.RawMessage(`{"ticker":"ACME","period":"`+p+`"}`))
		if e := toolErr(t, err); e.Code != sandbox.EToolFailed || e.Retryable || !strings.Contains(e.Message, "halted") {
			t.Errorf("history(ACME, %s) = %#v", p, e)
		}
	}
	var h History
	if err := json.Unmarshal(call(t, ts["get_price_history"], `{"ticker":"ACME","period":"1mo"}`), &h); err != nil {
		t.Fatal(err)
	}
	if n := len(h.Bars); n != 22-haltSessions || h.Bars[n-1].Date != sessions[Sessions-1-haltSessions] {
		t.Errorf("history(ACME, 1mo): %d bars ending %s", n, h.Bars[n-1].Date)
	}
	// Its other data is there.
	call(t, ts["get_financials"], `{"ticker":"ACME"}`)
	call(t, ts["search_competitors"], `{"ticker":"ACME"}`)
}

func TestUnknownTicker(t *testing.T) {
	ts := byName(t, Options{})
	for _, tc := range []struct{ tool, args, hint string }{
		{"get_stock_snapshot", `{"ticker":"APPL"}`, "AAPL"},
		{"get_stock_snapshot", `{"ticker":"BRKB"}`, "BRK.B"},
		{"get_price_history", `{"ticker":"microsoft","period":"1y"}`, "MSFT"},
		{"get_financials", `{"ticker":"NVDAA"}`, "NVDA"},
		{"search_competitors", `{"ticker":"ZZZZ"}`, "Closest tickers"},
	} {
		_, err := ts[tc.tool].Call(context.Background(), json.RawMessage(tc.args))
		e := toolErr(t, err)
		if e.Code != sandbox.EToolArgs || e.Path != "/ticker" || !strings.Contains(e.Hint, tc.hint) || !strings.Contains(e.Message, "unknown ticker") {
			t.Errorf("%s(%s) = %#v; want E_TOOL_ARGS at /ticker with a hint naming %s", tc.tool, tc.args, e, tc.hint)
		}
	}
	// The schema: empty, too long, control characters, wrong type, unknown field.
	for _, args := range []string{`{"ticker":""}`, `{"ticker":"` + strings.Repeat("A", 17) + `"}`, `{"ticker":"AA\nPL"}`,
		`{"ticker":5}`, `{}`, `{"ticker":"AAPL","exchange":"NYSE"}`} {
		if _, err := ts["get_stock_snapshot"].Call(context.Background(), json.RawMessage(args)); toolErr(t, err).Code != sandbox.EToolArgs {
			t.Errorf("snapshot(%s) = %v, want E_TOOL_ARGS", args, err)
		}
	}
}

func TestPeriods(t *testing.T) {
	hist := byName(t, Options{})["get_price_history"]
	for period, n := range periodSessions {
		var h History
		if err := json.Unmarshal(call(t, hist, fmt.Sprintf(`{"ticker":"BRK-B","period":%q}`, period)), &h); err != nil {
			t.Fatal(err)
		}
		all := bars(bySymbol["BRK.B"])
		if h.Ticker != "BRK.B" || h.Period != period || len(h.Bars) != n+1 || h.Source != Source || h.AsOf != AsOf ||
			h.Bars[0] != all[len(all)-1-n] || h.Bars[n] != all[len(all)-1] {
			t.Errorf("history(BRK-B, %s): %s, %d bars from %v", period, h.Ticker, len(h.Bars), h.Bars[0])
		}
	}
	if periodSessions["1y"] != Sessions-1 {
		t.Errorf("1y covers %d sessions, want all %d returns", periodSessions["1y"], Sessions-1)
	}
	for _, p := range []string{`"2y"`, `"1Y"`, `""`, `1`, `null`} {
		_, err := hist.Call(context.Background(), json.RawMessage(`{"ticker":"AAPL","period":`+p+`}`))
		e := toolErr(t, err)
		if e.Code != sandbox.EToolArgs || e.Path != "/period" {
			t.Errorf("history(period %s) = %#v, want E_TOOL_ARGS at /period", p, e)
		}
		if p == `"2y"` && len(e.AllowedValues) != 6 {
			t.Errorf("history(period 2y): allowed values %v, want the 6 periods", e.AllowedValues)
		}
	}
}

func TestSearchNews(t *testing.T) {
	news := byName(t, Options{})["search_news"]
	get := func(args string) News {
		var n News
		if err := json.Unmarshal(call(t, news, args), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, max := range []int{1, 3, 10} {
		n := get(fmt.Sprintf(`{"query":"apple","max_results":%d}`, max))
		if len(n.Results) != min(max, n.TotalMatches) || n.Source != Source || n.AsOf != AsOf {
			t.Errorf("max_results %d: %d results of %d", max, len(n.Results), n.TotalMatches)
		}
		for i, a := range n.Results {
			if a.Relevance <= 0 || a.Relevance > 1 || a.Source == "" || a.Date == "" || len(a.KeyPoints) == 0 ||
				i > 0 && a.Relevance > n.Results[i-1].Relevance {
				t.Errorf("result %d: %+v", i, a)
			}
		}
	}
	if n := get(`{"query":"AAPL"}`); len(n.Results) != 5 || n.TotalMatches < 5 {
		t.Errorf("default max_results: %d results", len(n.Results))
	}
	// A ticker in any accepted form finds its company's news first: the day's move.
	for _, q := range []string{"BF-B", "bf.b", "Brown-Forman"} {
		n := get(fmt.Sprintf(`{"query":%q,"max_results":1}`, q))
		if len(n.Results) != 1 || !slices.Equal(n.Results[0].Tickers, []string{"BF.B"}) || n.Results[0].Date != sessions[Sessions-1] {
			t.Errorf("news(%q) = %+v", q, n.Results)
		}
	}
	if n := get(`{"query":"oil inventories"}`); len(n.Results) == 0 || len(n.Results[0].Tickers) != 0 {
		t.Errorf("market-wide news not found: %+v", n)
	}
	if n := get(`{"query":"zyzzyva"}`); len(n.Results) != 0 || n.TotalMatches != 0 || n.Results == nil {
		t.Errorf("no match: %+v", n)
	}
	for args, path := range map[string]string{
		`{"query":"AAPL","max_results":0}`: "/max_results", `{"query":"AAPL","max_results":11}`: "/max_results",
		`{"query":"AAPL","max_results":-1}`: "/max_results", `{"query":"AAPL","max_results":2.5}`: "/max_results",
		`{"query":""}`: "/query", `{"query":"the of and"}`: "/query", `{"query":"` + strings.Repeat("x", 201) + `"}`: "/query",
	} {
		_, err := news.Call(context.Background(), json.RawMessage(args))
		if e := toolErr(t, err); e.Code != sandbox.EToolArgs || e.Path != path {
			t.Errorf("news(%.60s) = %#v, want E_TOOL_ARGS at %s", args, e, path)
		}
	}
}

func TestCompetitors(t *testing.T) {
	comp := byName(t, Options{})["search_competitors"]
	for _, c := range universe {
		var r Competitors
		if err := json.Unmarshal(call(t, comp, fmt.Sprintf(`{"ticker":%q}`, c.Ticker)), &r); err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, o := range universe {
			if o.Sector == c.Sector && o.Ticker != c.Ticker {
				want++
			}
		}
		if r.Ticker != c.Ticker || r.Sector != c.Sector || len(r.Competitors) != want || r.Source != Source {
			t.Fatalf("%s: %+v", c.Ticker, r)
		}
		own := float64(lastCap(&c))
		prev := 0.0
		for _, p := range r.Competitors {
			o := bySymbol[p.Ticker]
			ratio := max(own, float64(p.MarketCap)) / min(own, float64(p.MarketCap))
			if o.Sector != c.Sector || p.MarketCap != lastCap(o) || ratio < prev {
				t.Errorf("%s: competitor %+v out of place", c.Ticker, p)
			}
			prev = ratio
		}
	}
}

func TestFinancials(t *testing.T) {
	fin := byName(t, Options{})["get_financials"]
	for _, c := range universe {
		var f Financials
		if err := json.Unmarshal(call(t, fin, fmt.Sprintf(`{"ticker":%q}`, c.Ticker)), &f); err != nil {
			t.Fatal(err)
		}
		if f.Ticker != c.Ticker || f.Revenue <= 0 || f.GrossProfit < f.OperatingIncome || (f.NetIncome < 0) != c.Loss ||
			(f.EPS < 0) != c.Loss || f.Source != Source || f.AsOf != AsOf || f.SharesOutstanding <= 0 {
			t.Errorf("%s: %+v", c.Ticker, f)
		}
	}
}

// The flaky tool fails the same calls for the same seed, whatever the order
// or concurrency of the calls; the fraction is near the rate; failures are
// retryable.
func TestFlaky(t *testing.T) {
	type outcome struct{ fail, ok int }
	runCalls := func(o Options, concurrent bool) (map[string]outcome, []bool) {
		hist := byName(t, o)["get_price_history"]
		var mu sync.Mutex
		got := map[string]outcome{}
		var seq []bool
		var wg sync.WaitGroup
		for range 8 {
			for _, tk := range Tickers() {
				for _, p := range []string{"1y", "1mo"} {
					f := func() {
						_, err := hist.Call(context.Background(), json.RawMessage(fmt.Sprintf(`{"ticker":%q,"period":%q}`, tk, p)))
						failed := err != nil
						if failed {
							if e := toolErr(t, err); e.Code != sandbox.EToolFailed || !e.Retryable {
								t.Errorf("flaky failure %#v is not a retryable E_TOOL_FAILED", e)
							}
						}
						mu.Lock()
						defer mu.Unlock()
						o := got[tk+p]
						if failed {
							o.fail++
						} else {
							o.ok++
						}
						got[tk+p] = o
						seq = append(seq, failed)
					}
					if concurrent {
						wg.Add(1)
						go func() { defer wg.Done(); f() }()
					} else {
						f()
					}
				}
			}
		}
		wg.Wait()
		return got, seq
	}
	o := Options{FlakyRate: 0.1, Seed: 7}
	a, seqA := runCalls(o, false)
	_, seqB := runCalls(o, false)
	c, _ := runCalls(o, true)
	if !slices.Equal(seqA, seqB) {
		t.Error("two toolsets with the same seed failed different calls")
	}
	total, failed := 0, 0
	for k, v := range a {
		if c[k] != v {
			t.Errorf("%s: %+v sequentially, %+v concurrently", k, v, c[k])
		}
		total += v.fail + v.ok
		failed += v.fail
	}
	if frac := float64(failed) / float64(total); frac < 0.07 || frac > 0.13 {
		t.Errorf("%d of %d calls failed (%.3f), want about 0.1", failed, total, frac)
	}
	if _, seqS := runCalls(Options{FlakyRate: 0.1, Seed: 8}, false); slices.Equal(seqA, seqS) {
		t.Error("seeds 7 and 8 failed the same calls")
	}
	for _, rate := range []float64{0, 1} {
		got, _ := runCalls(Options{FlakyRate: rate, Seed: 7}, false)
		for k, v := range got {
			if rate == 0 && v.fail != 0 || rate == 1 && v.ok != 0 {
				t.Errorf("rate %v: %s %+v", rate, k, v)
			}
		}
	}
	// The other tools never fail transiently.
	ts := byName(t, Options{FlakyRate: 1, Seed: 7})
	call(t, ts["get_stock_snapshot"], `{"ticker":"AAPL"}`)
	call(t, ts["get_financials"], `{"ticker":"AAPL"}`)
	call(t, ts["search_news"], `{"query":"AAPL"}`)
	call(t, ts["search_competitors"], `{"ticker":"AAPL"}`)
	for _, bad := range []float64{-0.1, 1.5} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Tools(FlakyRate %v) did not panic", bad)
				}
			}()
			Tools(Options{FlakyRate: bad})
		}()
	}
}

func TestToolMetadata(t *testing.T) {
	ts := Tools(Options{})
	if len(ts) != 5 {
		t.Fatalf("%d tools, want 5", len(ts))
	}
	for _, tool := range ts {
		if !tool.Effects.ReadOnly || !tool.Effects.Idempotent || tool.Effects.Destructive || tool.Effects.OpenWorld {
			t.Errorf("%s: effects %+v, want read-only, idempotent, closed world", tool.Name, tool.Effects)
		}
		d := tool.Description
		if first, _, _ := strings.Cut(d, "? "); strings.Contains(first, ".") || !strings.Contains(d, "Use when") ||
			!strings.Contains(d, "Do not use") || !strings.Contains(d, "instead") {
			t.Errorf("%s: description should open with its question, say when to use it, when not, and what instead:\n%s", tool.Name, d)
		}
		in := tool.InputSchema
		if in == nil || in.Type != "object" || in.AdditionalProperties == nil || in.Required == nil || tool.OutputSchema == nil {
			t.Errorf("%s: input schema must be a closed object with required; output schema set", tool.Name)
		}
		if tool.OutputBudget <= 0 {
			t.Errorf("%s: no output budget", tool.Name)
		}
		if len(tool.Examples) != 1 || len(tool.Examples[0].Result) == 0 {
			t.Fatalf("%s: want 1 example with a result", tool.Name)
		}
		ex := tool.Examples[0]
		full, err := tool.Call(context.Background(), ex.Args)
		if err != nil {
			t.Errorf("%s: example args %s: %v", tool.Name, ex.Args, err)
			continue
		}
		// The example result is the real result, possibly with a list cut short.
		var fullV, exV map[string]any
		if json.Unmarshal(full, &fullV) != nil || json.Unmarshal(ex.Result, &exV) != nil {
			t.Fatalf("%s: results are not objects", tool.Name)
		}
		for k, v := range fullV {
			if list, ok := v.([]any); ok {
				if el, _ := exV[k].([]any); len(el) > 0 && len(el) < len(list) {
					fullV[k] = list[:len(el)]
				}
			}
		}
		if a, b := fmt.Sprint(fullV), fmt.Sprint(exV); a != b {
			t.Errorf("%s: example result differs from the real one:\n%s\n%s", tool.Name, b, a)
		}
	}
}

// Every result of every tool, for every listing, fits its output budget and
// matches its output schema.
func TestOutputBudgets(t *testing.T) {
	ts := byName(t, Options{})
	resolved := map[string]*jsonschema.Resolved{}
	for name, tool := range ts {
		rs, err := tool.OutputSchema.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema: %v", name, err)
		}
		resolved[name] = rs
	}
	// The schemas do reject: the lists are never null.
	var bad any
	_ = json.Unmarshal([]byte(`{"query":"x","results":null,"total_matches":0,"source":"s","as_of":"t"}`), &bad)
	if resolved["search_news"].Validate(bad) == nil {
		t.Error("search_news output schema accepts results: null")
	}
	largest := map[string]int{}
	for _, tk := range Tickers() {
		for name, args := range map[string]string{
			"get_stock_snapshot": `{"ticker":%q}`, "get_price_history": `{"ticker":%q,"period":"1y"}`, "get_financials": `{"ticker":%q}`,
			"search_news": `{"query":%q,"max_results":10}`, "search_competitors": `{"ticker":%q}`,
		} {
			res, err := ts[name].Call(context.Background(), json.RawMessage(fmt.Sprintf(args, tk)))
			if err != nil && tk == HaltedTicker {
				continue
			}
			if err != nil {
				t.Fatalf("%s(%s): %v", name, tk, err)
			}
			largest[name] = max(largest[name], len(res))
			var v any
			if err := json.Unmarshal(res, &v); err != nil {
				t.Fatal(err)
			}
			if err := resolved[name].Validate(v); err != nil {
				t.Errorf("%s(%s): result does not match the output schema: %v", name, tk, err)
			}
		}
	}
	for name, n := range largest {
		if b := ts[name].OutputBudget; n > b || b > 4*n+4096 {
			t.Errorf("%s: largest result %d bytes, budget %d", name, n, b)
		}
	}
}

// Results are copies: a caller that scribbles on one does not change the
// cache.
func TestHistoryCacheCopies(t *testing.T) {
	hist := byName(t, Options{})["get_price_history"]
	a := call(t, hist, `{"ticker":"KO","period":"5d"}`)
	want := string(a)
	for i := range a {
		a[i] = 'x'
	}
	if b := call(t, hist, `{"ticker":"ko","period":"5d"}`); string(b) != want {
		t.Errorf("cached result changed: %.80s", b)
	}
}

func BenchmarkHistoryCached(b *testing.B) {
	hist := byName(b, Options{})["get_price_history"]
	args := json.RawMessage(`{"ticker":"AAPL","period":"1y"}`)
	call(b, hist, string(args))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hist.Call(context.Background(), args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSearchNews(b *testing.B) {
	news := byName(b, Options{})["search_news"]
	args := json.RawMessage(`{"query":"AAPL","max_results":1}`)
	call(b, news, string(args))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := news.Call(context.Background(), args); err != nil {
			b.Fatal(err)
		}
	}
}
