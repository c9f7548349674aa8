package market

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sandcall/sandcall/tools"
)

// This file generates the dataset. Everything is a function of DataSeed and
// a ticker: no clock, no network, no global state. Products are wrapped in
// float64(...) so that no compiler may fuse them into a multiply-add (the Go
// spec allows fusing otherwise), and no transcendental function is used, so
// the numbers are the same on every platform.

// The dataset's fixed parameters.
const (
	// DataSeed seeds every generated number of the dataset.
	DataSeed uint64 = 20261127
	// AsOf is the time of the dataset: the close of its last session,
	// 2026-11-27 16:00 New York time. Every result carries it.
	AsOf = "2026-11-27T21:00:00Z"
	// Source names the data source every result carries.
	Source = "sandcall synthetic market data v1 (deterministic; not real prices)"
	// Currency of every price and amount.
	Currency = "USD"
	// Sessions is the number of daily closes per ticker: one year of 252
	// daily returns needs 253 closes.
	Sessions = 253
	// HaltedTicker is the listing with no current price: its trading was
	// halted a few sessions before AsOf, so get_stock_snapshot fails for it
	// (never a zero price) and its history stops at the halt.
	HaltedTicker = "ACME"
	// haltSessions is how many of the last sessions the halted listing missed.
	haltSessions = 5
	// periodEnd is the end of the trailing twelve months of the financials.
	periodEnd = "2026-09-30"
)

// company is one listing of the universe, with the inputs its data is
// generated from.
type company struct {
	Ticker string // canonical form: class shares as BASE.CLASS, e.g. BRK.B
	Name   string
	Short  string // the name headlines use
	Sector string
	Price0 float64 // close of the first session
	Shares float64 // shares outstanding, millions
	Loss   bool    // negative trailing earnings: P/E is null
}

// universe is the fixed set of listings, grouped by sector.
var universe = []company{
	{"AAPL", "Apple Inc.", "Apple", "Technology", 230, 15000, false},
	{"MSFT", "Microsoft Corporation", "Microsoft", "Technology", 420, 7430, false},
	{"NVDA", "NVIDIA Corporation", "Nvidia", "Technology", 140, 24500, false},
	{"AVGO", "Broadcom Inc.", "Broadcom", "Technology", 170, 4700, false},
	{"ORCL", "Oracle Corporation", "Oracle", "Technology", 170, 2800, false},
	{"CRM", "Salesforce, Inc.", "Salesforce", "Technology", 290, 960, false},
	{"ADBE", "Adobe Inc.", "Adobe", "Technology", 500, 440, false},
	{"AMD", "Advanced Micro Devices, Inc.", "AMD", "Technology", 150, 1620, false},
	{"INTC", "Intel Corporation", "Intel", "Technology", 22, 4300, true},
	{"CSCO", "Cisco Systems, Inc.", "Cisco", "Technology", 56, 3990, false},

	{"GOOGL", "Alphabet Inc. Class A", "Alphabet", "Communication Services", 170, 12200, false},
	{"META", "Meta Platforms, Inc.", "Meta", "Communication Services", 560, 2530, false},
	{"NFLX", "Netflix, Inc.", "Netflix", "Communication Services", 700, 430, false},
	{"DIS", "The Walt Disney Company", "Disney", "Communication Services", 100, 1810, false},
	{"T", "AT&T Inc.", "AT&T", "Communication Services", 22, 7170, false},
	{"VZ", "Verizon Communications Inc.", "Verizon", "Communication Services", 42, 4210, false},

	{"AMZN", "Amazon.com, Inc.", "Amazon", "Consumer Discretionary", 190, 10500, false},
	{"TSLA", "Tesla, Inc.", "Tesla", "Consumer Discretionary", 250, 3200, false},
	{"HD", "The Home Depot, Inc.", "Home Depot", "Consumer Discretionary", 390, 990, false},
	{"MCD", "McDonald's Corporation", "McDonald's", "Consumer Discretionary", 290, 717, false},
	{"NKE", "NIKE, Inc. Class B", "Nike", "Consumer Discretionary", 80, 1500, false},
	{"SBUX", "Starbucks Corporation", "Starbucks", "Consumer Discretionary", 95, 1130, false},
	{"GM", "General Motors Company", "GM", "Consumer Discretionary", 50, 1100, false},

	{"BRK.B", "Berkshire Hathaway Inc. Class B", "Berkshire", "Financials", 460, 2160, false},
	{"JPM", "JPMorgan Chase & Co.", "JPMorgan", "Financials", 220, 2820, false},
	{"BAC", "Bank of America Corporation", "Bank of America", "Financials", 42, 7780, false},
	{"WFC", "Wells Fargo & Company", "Wells Fargo", "Financials", 65, 3330, false},
	{"GS", "The Goldman Sachs Group, Inc.", "Goldman", "Financials", 520, 314, false},
	{"MS", "Morgan Stanley", "Morgan Stanley", "Financials", 115, 1610, false},
	{"V", "Visa Inc. Class A", "Visa", "Financials", 290, 1950, false},
	{"MA", "Mastercard Incorporated", "Mastercard", "Financials", 500, 920, false},

	{"UNH", "UnitedHealth Group Incorporated", "UnitedHealth", "Health Care", 560, 920, false},
	{"JNJ", "Johnson & Johnson", "J&J", "Health Care", 155, 2410, false},
	{"LLY", "Eli Lilly and Company", "Lilly", "Health Care", 850, 950, false},
	{"PFE", "Pfizer Inc.", "Pfizer", "Health Care", 28, 5670, false},
	{"MRK", "Merck & Co., Inc.", "Merck", "Health Care", 100, 2530, false},
	{"ABBV", "AbbVie Inc.", "AbbVie", "Health Care", 180, 1770, false},

	{"WMT", "Walmart Inc.", "Walmart", "Consumer Staples", 80, 8040, false},
	{"PG", "The Procter & Gamble Company", "P&G", "Consumer Staples", 165, 2350, false},
	{"KO", "The Coca-Cola Company", "Coca-Cola", "Consumer Staples", 68, 4310, false},
	{"PEP", "PepsiCo, Inc.", "PepsiCo", "Consumer Staples", 165, 1370, false},
	{"COST", "Costco Wholesale Corporation", "Costco", "Consumer Staples", 900, 443, false},
	{"BF.B", "Brown-Forman Corporation Class B", "Brown-Forman", "Consumer Staples", 45, 473, false},
	{"MO", "Altria Group, Inc.", "Altria", "Consumer Staples", 50, 1700, false},

	{"XOM", "Exxon Mobil Corporation", "Exxon", "Energy", 115, 4400, false},
	{"CVX", "Chevron Corporation", "Chevron", "Energy", 150, 1800, false},
	{"COP", "ConocoPhillips", "ConocoPhillips", "Energy", 105, 1300, false},
	{"SLB", "SLB N.V.", "SLB", "Energy", 42, 1410, false},

	{"CAT", "Caterpillar Inc.", "Caterpillar", "Industrials", 360, 484, false},
	{"BA", "The Boeing Company", "Boeing", "Industrials", 160, 740, true},
	{"GE", "GE Aerospace", "GE Aerospace", "Industrials", 180, 1080, false},
	{"HON", "Honeywell International Inc.", "Honeywell", "Industrials", 210, 650, false},
	{"UPS", "United Parcel Service, Inc. Class B", "UPS", "Industrials", 130, 855, false},
	{"RTX", "RTX Corporation", "RTX", "Industrials", 120, 1330, false},
	{HaltedTicker, "Acme Corporation", "Acme", "Industrials", 38, 120, false},

	{"NEE", "NextEra Energy, Inc.", "NextEra", "Utilities", 75, 2050, false},
	{"DUK", "Duke Energy Corporation", "Duke Energy", "Utilities", 110, 772, false},
	{"SO", "The Southern Company", "Southern Co.", "Utilities", 88, 1090, false},
}

// bySymbol indexes the universe by canonical ticker.
var bySymbol = func() map[string]*company {
	m := make(map[string]*company, len(universe))
	for i := range universe {
		m[universe[i].Ticker] = &universe[i]
	}
	return m
}()

// Tickers returns the canonical tickers of the universe, in universe order
// (grouped by sector).
func Tickers() []string {
	out := make([]string, len(universe))
	for i, c := range universe {
		out[i] = c.Ticker
	}
	return out
}

// Normalize returns the canonical form of a ticker as a user may write it:
// surrounding space trimmed, upper-cased, and a class-share separator ('.',
// '-' or '/') written as '.', so "brk.b", "BRK-B", " BRK/B " and "BRK.B" are
// all BRK.B, and "BF-B" is BF.B. The canonical form (BASE.CLASS) is the one
// every result reports. ok is false if the result is not in the universe.
func Normalize(ticker string) (canonical string, ok bool) {
	s := strings.ToUpper(strings.TrimSpace(ticker))
	s = strings.NewReplacer("-", ".", "/", ".").Replace(s)
	_, ok = bySymbol[s]
	return s, ok
}

// closest returns up to n tickers of the universe nearest to s (already
// normalized): those whose company name starts with s first, then by edit
// distance, ties in universe order.
func closest(s string, n int) []string {
	type cand struct {
		ticker string
		score  int
	}
	var cs []cand
	for _, c := range universe {
		d := tools.EditDistance(s, c.Ticker)
		if len(s) >= 3 && strings.HasPrefix(strings.ToUpper(c.Name), s) {
			d = -1
		}
		cs = append(cs, cand{c.Ticker, d})
	}
	// Stable: universe order among equal scores.
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(a.score, b.score) })
	out := make([]string, 0, n)
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.ticker)
	}
	return out
}

// rng is splitmix64: a tiny, well-mixed, fully specified generator.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float returns a uniform float64 in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// between returns a uniform float64 in [lo, hi).
func (r *rng) between(lo, hi float64) float64 { return lo + float64((hi-lo)*r.float()) }

// normal returns an approximately standard normal number (Irwin-Hall: the
// sum of 12 uniforms less 6), with plain arithmetic only.
func (r *rng) normal() float64 {
	s := 0.0
	for range 12 {
		s += r.float()
	}
	return s - 6
}

// pick returns a uniform index below n.
func (r *rng) pick(n int) int { return int(r.next() % uint64(n)) }

// fnv64 is FNV-1a, 64-bit.
func fnv64(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

// seeded returns the generator of one stream of the dataset.
func seeded(parts ...string) *rng {
	r := rng(DataSeed ^ fnv64(strings.Join(parts, "|")))
	return &r
}

// round2 rounds to cents, half away from zero.
func round2(x float64) float64 { return math.Round(float64(x*100)) / 100 }

// holidays are the NYSE full-day closures in the dataset's year.
var holidays = map[string]bool{
	"2025-11-27": true, "2025-12-25": true, "2026-01-01": true, "2026-01-19": true, "2026-02-16": true,
	"2026-04-03": true, "2026-05-25": true, "2026-06-19": true, "2026-07-03": true, "2026-09-07": true,
	"2026-11-26": true,
}

// sessions are the dates of the dataset's trading sessions, oldest first,
// ending on AsOf's date.
var sessions = sessionDates()

func sessionDates() []string {
	d := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	out := make([]string, Sessions)
	for i := Sessions - 1; i >= 0; {
		s := d.Format(time.DateOnly)
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday && !holidays[s] {
			out[i] = s
			i--
		}
		d = d.AddDate(0, 0, -1)
	}
	return out
}

// Bar is one daily session of a ticker.
type Bar struct {
	Date   string  `json:"date" jsonschema:"session date, YYYY-MM-DD"`
	Open   float64 `json:"open" jsonschema:"opening price, USD"`
	High   float64 `json:"high" jsonschema:"highest price, USD"`
	Low    float64 `json:"low" jsonschema:"lowest price, USD"`
	Close  float64 `json:"close" jsonschema:"closing price, USD"`
	Volume int64   `json:"volume" jsonschema:"shares traded"`
}

// profile is the generated character of one listing.
type profile struct {
	drift, vol float64 // annual
	pe         float64 // price/earnings at the first session (Loss: earnings are negative)
	ps         float64 // price/sales at the first session
	gross      float64 // gross margin
	turnover   float64 // share of outstanding shares traded on a typical day
}

func profileOf(c *company) profile {
	r := seeded("profile", c.Ticker)
	return profile{
		drift:    r.between(-0.25, 0.45),
		vol:      r.between(0.15, 0.55),
		pe:       r.between(10, 45),
		ps:       r.between(1, 12),
		gross:    r.between(0.25, 0.75),
		turnover: r.between(0.002, 0.012),
	}
}

// allBars holds the bars of every listing, generated on first use (not at
// package initialization: every worker process links this package).
var allBars = sync.OnceValue(func() map[string][]Bar {
	m := make(map[string][]Bar, len(universe))
	for i := range universe {
		m[universe[i].Ticker] = genBars(&universe[i])
	}
	return m
})

// bars returns the sessions of c, oldest first: Sessions bars, or fewer for
// the halted listing (none after its halt). The slice is shared: callers
// must not modify it.
func bars(c *company) []Bar { return allBars()[c.Ticker] }

// genBars generates the bars of c.
func genBars(c *company) []Bar {
	p := profileOf(c)
	r := seeded("bars", c.Ticker)
	dailyVol := p.vol / math.Sqrt(252)
	dailyDrift := p.drift / 252
	baseVolume := float64(c.Shares * 1e6 * p.turnover)
	n := Sessions
	if c.Ticker == HaltedTicker {
		n -= haltSessions
	}
	out := make([]Bar, n)
	prev := c.Price0
	for i := range n {
		z := r.normal()
		ret := dailyDrift + float64(dailyVol*z)
		closeP := float64(prev * max(0.5, 1+ret))
		if i == 0 {
			closeP = c.Price0
		}
		open := float64(prev * (1 + float64(float64(dailyVol*0.3)*r.normal())))
		hi := float64(max(open, closeP) * (1 + float64(float64(dailyVol*0.5)*r.float())))
		lo := float64(min(open, closeP) * (1 - float64(float64(dailyVol*0.5)*r.float())))
		volume := float64(baseVolume*(0.5+r.float())) * (1 + float64(10*math.Abs(ret)))
		out[i] = Bar{Date: sessions[i], Open: round2(open), High: round2(hi), Low: round2(lo), Close: round2(closeP), Volume: int64(volume)}
		prev = closeP
	}
	// Rounding may put open or close a cent outside [low, high].
	for i := range out {
		b := &out[i]
		b.High = max(b.High, b.Open, b.Close)
		b.Low = min(b.Low, b.Open, b.Close)
	}
	return out
}

// Periods of get_price_history and the sessions each covers: the closes of
// the last N sessions plus the close before them, so that the first bar is
// the base of the period's return.
var periodSessions = map[string]int{"1d": 1, "5d": 5, "1mo": 21, "3mo": 63, "6mo": 126, "1y": 252}

// periodBars returns the bars of c within period: those dated on or after
// the base session of the period. The halted listing may have none, or the
// base alone.
func periodBars(c *company, period string) []Bar {
	all := bars(c)
	first := sessions[Sessions-1-periodSessions[period]]
	for i, b := range all {
		if b.Date >= first {
			return all[i:]
		}
	}
	return nil
}

// Snapshot is the result of get_stock_snapshot.
type Snapshot struct {
	Ticker    string   `json:"ticker" jsonschema:"canonical ticker (class shares as BASE.CLASS, e.g. BRK.B)"`
	Name      string   `json:"name" jsonschema:"company name"`
	Sector    string   `json:"sector" jsonschema:"sector; search_competitors lists its other members"`
	Currency  string   `json:"currency" jsonschema:"currency of prices and amounts (always USD)"`
	Price     float64  `json:"price" jsonschema:"last close, USD (never zero: a listing without a current price is an error)"`
	Change    float64  `json:"change" jsonschema:"change from the previous close, USD"`
	ChangePct float64  `json:"change_pct" jsonschema:"change from the previous close, percent, 2 decimals"`
	Volume    int64    `json:"volume" jsonschema:"shares traded in the last session"`
	MarketCap int64    `json:"market_cap" jsonschema:"price times shares outstanding, USD"`
	PERatio   *float64 `json:"pe_ratio" jsonschema:"price over trailing twelve-month earnings per share, 2 decimals; null when earnings are negative"`
	Summary   string   `json:"summary" jsonschema:"one-line summary"`
	Source    string   `json:"source" jsonschema:"data source"`
	AsOf      string   `json:"as_of" jsonschema:"time of the data, RFC 3339 UTC"`
}

// errNoPrice reports that a listing has no current price.
type errNoPrice struct {
	ticker, haltedOn, lastDate string
	lastClose                  float64
}

// eps returns the trailing earnings per share of c.
func eps(c *company, p profile) float64 {
	e := round2(c.Price0 / p.pe)
	if c.Loss {
		e = -e
	}
	return e
}

// snapshot returns the snapshot of c, or the reason it has none.
func snapshot(c *company) (Snapshot, *errNoPrice) {
	bs := bars(c)
	last, prevBar := bs[len(bs)-1], bs[len(bs)-2]
	if last.Date != sessions[Sessions-1] {
		return Snapshot{}, &errNoPrice{ticker: c.Ticker, haltedOn: sessions[len(bs)], lastDate: last.Date, lastClose: last.Close}
	}
	p := profileOf(c)
	s := Snapshot{
		Ticker: c.Ticker, Name: c.Name, Sector: c.Sector, Currency: Currency,
		Price:     last.Close,
		Change:    round2(last.Close - prevBar.Close),
		ChangePct: round2(float64((last.Close/prevBar.Close - 1) * 100)),
		Volume:    last.Volume,
		MarketCap: marketCap(c, last.Close),
		Source:    Source, AsOf: AsOf,
	}
	if e := eps(c, p); e > 0 {
		pe := round2(last.Close / e)
		s.PERatio = &pe
	}
	verb := "up"
	if s.ChangePct < 0 {
		verb = "down"
	} else if s.ChangePct == 0 {
		verb = "unchanged at"
	}
	move := strconv.FormatFloat(math.Abs(s.ChangePct), 'f', 2, 64) + "%"
	if s.ChangePct == 0 {
		move = "0.00%"
	}
	s.Summary = c.Name + " (" + c.Ticker + ") closed at $" + strconv.FormatFloat(s.Price, 'f', 2, 64) + ", " + verb + " " + move +
		" on " + humanCount(float64(s.Volume)) + " shares; market cap $" + humanCount(float64(s.MarketCap)) + "."
	return s, nil
}

func marketCap(c *company, price float64) int64 {
	return int64(math.Round(float64(float64(price*c.Shares) * 1e6)))
}

// humanCount writes n with a K, M, B or T suffix and 1 decimal.
func humanCount(n float64) string {
	for _, u := range []struct {
		v float64
		s string
	}{{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}} {
		if n >= u.v {
			return strconv.FormatFloat(n/u.v, 'f', 1, 64) + u.s
		}
	}
	return strconv.FormatFloat(n, 'f', 0, 64)
}

// Financials is the result of get_financials.
type Financials struct {
	Ticker             string  `json:"ticker" jsonschema:"canonical ticker"`
	Name               string  `json:"name" jsonschema:"company name"`
	Period             string  `json:"period" jsonschema:"the period the figures cover"`
	Currency           string  `json:"currency" jsonschema:"currency of amounts (always USD)"`
	Revenue            int64   `json:"revenue" jsonschema:"revenue, USD"`
	GrossProfit        int64   `json:"gross_profit" jsonschema:"gross profit, USD"`
	OperatingIncome    int64   `json:"operating_income" jsonschema:"operating income, USD (negative: a loss)"`
	NetIncome          int64   `json:"net_income" jsonschema:"net income, USD (negative: a loss)"`
	EPS                float64 `json:"eps" jsonschema:"diluted earnings per share, USD"`
	GrossMarginPct     float64 `json:"gross_margin_pct" jsonschema:"gross profit over revenue, percent"`
	OperatingMarginPct float64 `json:"operating_margin_pct" jsonschema:"operating income over revenue, percent"`
	NetMarginPct       float64 `json:"net_margin_pct" jsonschema:"net income over revenue, percent"`
	FreeCashFlow       int64   `json:"free_cash_flow" jsonschema:"operating cash flow less capital spending, USD"`
	Cash               int64   `json:"cash" jsonschema:"cash and short-term investments at period end, USD"`
	Debt               int64   `json:"debt" jsonschema:"total debt at period end, USD"`
	SharesOutstanding  int64   `json:"shares_outstanding" jsonschema:"shares outstanding"`
	Source             string  `json:"source" jsonschema:"data source"`
	AsOf               string  `json:"as_of" jsonschema:"time of the data, RFC 3339 UTC"`
}

func financials(c *company) Financials {
	p := profileOf(c)
	r := seeded("financials", c.Ticker)
	shares := float64(c.Shares * 1e6)
	e := eps(c, p)
	revenue := float64(float64(c.Price0*shares) / p.ps)
	net := float64(e * shares)
	op := float64(net * 1.3)
	if c.Loss {
		op = float64(net * 0.8)
	}
	gross := float64(revenue * p.gross)
	if gross < float64(op*1.1) {
		gross = float64(op * 1.1)
	}
	fcf := float64(net * r.between(0.6, 1.3))
	cash := float64(revenue * r.between(0.05, 0.6))
	debt := float64(revenue * r.between(0.1, 1.2))
	pct := func(x float64) float64 { return round2(float64(x / revenue * 100)) }
	return Financials{
		Ticker: c.Ticker, Name: c.Name, Period: "trailing twelve months to " + periodEnd, Currency: Currency,
		Revenue: int64(revenue), GrossProfit: int64(gross), OperatingIncome: int64(op), NetIncome: int64(net), EPS: e,
		GrossMarginPct: pct(gross), OperatingMarginPct: pct(op), NetMarginPct: pct(net),
		FreeCashFlow: int64(fcf), Cash: int64(cash), Debt: int64(debt), SharesOutstanding: int64(shares),
		Source: Source, AsOf: AsOf,
	}
}

// Peer is one competitor in a search_competitors result.
type Peer struct {
	Ticker    string `json:"ticker" jsonschema:"canonical ticker"`
	Name      string `json:"name" jsonschema:"company name"`
	MarketCap int64  `json:"market_cap" jsonschema:"market capitalization at the last available close, USD"`
}

// Competitors is the result of search_competitors.
type Competitors struct {
	Ticker      string `json:"ticker" jsonschema:"canonical ticker asked about"`
	Sector      string `json:"sector" jsonschema:"its sector"`
	Competitors []Peer `json:"competitors" jsonschema:"the other listings of the sector, closest in market capitalization first"`
	Source      string `json:"source" jsonschema:"data source"`
	AsOf        string `json:"as_of" jsonschema:"time of the data, RFC 3339 UTC"`
}

// lastCap is the market capitalization of c at its last available close.
func lastCap(c *company) int64 {
	bs := bars(c)
	return marketCap(c, bs[len(bs)-1].Close)
}

// competitors ranks the other listings of c's sector by how close their
// market capitalization is to c's (the ratio of the larger to the smaller),
// ties by ticker.
func competitors(c *company) Competitors {
	own := float64(lastCap(c))
	type cand struct {
		p     Peer
		ratio float64
	}
	var cs []cand
	for i := range universe {
		o := &universe[i]
		if o.Sector != c.Sector || o.Ticker == c.Ticker {
			continue
		}
		mc := lastCap(o)
		f := float64(mc)
		cs = append(cs, cand{Peer{o.Ticker, o.Name, mc}, max(f, own) / min(f, own)})
	}
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && (cs[j].ratio < cs[j-1].ratio || cs[j].ratio == cs[j-1].ratio && cs[j].p.Ticker < cs[j-1].p.Ticker); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
	out := Competitors{Ticker: c.Ticker, Sector: c.Sector, Competitors: make([]Peer, len(cs)), Source: Source, AsOf: AsOf}
	for i, x := range cs {
		out.Competitors[i] = x.p
	}
	return out
}
