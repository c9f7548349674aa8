package market

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Article is one news item of a search_news result.
type Article struct {
	Headline  string   `json:"headline" jsonschema:"the headline"`
	Source    string   `json:"source" jsonschema:"the publication"`
	Date      string   `json:"date" jsonschema:"publication date, YYYY-MM-DD"`
	Relevance float64  `json:"relevance" jsonschema:"how well the article matches the query, 0 to 1 (recent articles rank higher)"`
	Tickers   []string `json:"tickers" jsonschema:"canonical tickers the article is about (empty: market-wide news)"`
	KeyPoints []string `json:"key_points" jsonschema:"the article's key points, one line each"`
}

// News is the result of search_news.
type News struct {
	Query        string    `json:"query" jsonschema:"the query as given"`
	Results      []Article `json:"results" jsonschema:"the best matches, most relevant first (empty when nothing matches)"`
	TotalMatches int       `json:"total_matches" jsonschema:"how many articles match in all"`
	Source       string    `json:"source" jsonschema:"data source"`
	AsOf         string    `json:"as_of" jsonschema:"time of the data, RFC 3339 UTC"`
}

// article is an Article before it is scored, with the session it was
// published on (an index into sessions).
type article struct {
	Article
	session int
	words   map[string]float64 // lower-case word → weight of a match
}

var publications = []string{"Market Wire", "The Ledger", "Capital Street Journal", "Sector Watch", "Daily Ticker", "Closing Bell Report"}

var sectorSegments = map[string][]string{
	"Technology":             {"cloud", "AI chip", "data center", "software"},
	"Communication Services": {"advertising", "streaming", "wireless", "AI"},
	"Consumer Discretionary": {"e-commerce", "EV", "store", "loyalty"},
	"Financials":             {"payments", "lending", "wealth", "trading"},
	"Health Care":            {"obesity drug", "oncology", "vaccine", "insurance"},
	"Consumer Staples":       {"beverage", "grocery", "pricing", "export"},
	"Energy":                 {"shale", "LNG", "refining", "offshore"},
	"Industrials":            {"aerospace", "freight", "defense", "automation"},
	"Utilities":              {"grid", "solar", "nuclear", "rate case"},
}

var (
	upReasons   = []string{"buyers return", "analysts turn bullish", "volume surges", "its sector rallies"}
	downReasons = []string{"investors take profits", "analysts turn cautious", "its sector slips", "selling picks up"}
	drivers     = []string{"demand", "pricing", "margins", "volumes"}
	headwinds   = []string{"demand cools", "costs rise", "currency weighs", "orders slow"}
)

// marketNews are the market-wide articles: no tickers.
var marketNews = []struct {
	headline string
	points   []string
	ago      int
}{
	{"Stocks edge higher as bond yields ease", []string{"10-year yield falls 6 basis points", "Small caps lead the advance"}, 0},
	{"Fed minutes show officials split on a December cut", []string{"Several members favour a pause", "Markets price a 55% chance of a cut"}, 2},
	{"Oil slips as US inventories build for a third week", []string{"Crude stocks up 2.1 million barrels", "Energy shares lag the market"}, 3},
	{"Holiday retail sales forecast tops estimates", []string{"Online sales seen up 8%", "Retailers add seasonal staff"}, 1},
}

// articles returns every article of the dataset, generated on first use.
var articles = sync.OnceValue(func() []article {
	var out []article
	for i := range universe {
		out = append(out, companyNews(&universe[i])...)
	}
	for i, m := range marketNews {
		a := article{Article: Article{Headline: m.headline, Source: publications[i%len(publications)],
			Tickers: []string{}, KeyPoints: m.points}, session: Sessions - 1 - m.ago}
		out = append(out, a)
	}
	for i := range out {
		a := &out[i]
		a.Date = sessions[a.session]
		a.words = map[string]float64{}
		for _, p := range a.KeyPoints {
			for _, w := range words(p) {
				a.words[w] = max(a.words[w], 0.3)
			}
		}
		for _, w := range words(a.Headline) {
			a.words[w] = max(a.words[w], 0.5)
		}
		for _, t := range a.Tickers {
			c := bySymbol[t]
			for _, w := range append(words(c.Name), words(c.Short)...) {
				a.words[w] = max(a.words[w], 0.8)
			}
		}
	}
	return out
})

func pctText(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) + "%" }

// companyNews returns the five articles about c: the move of its last
// session (or its halt), then four drawn from templates.
func companyNews(c *company) []article {
	r := seeded("news", c.Ticker)
	bs := bars(c)
	n := len(bs)
	last, prev := bs[n-1], bs[n-2]
	var first article
	if n < Sessions { // halted
		first = article{Article: Article{
			Headline:  c.Short + " shares halted pending an announcement",
			KeyPoints: []string{"Last close $" + strconv.FormatFloat(last.Close, 'f', 2, 64) + " on " + last.Date, "No resumption time given"},
		}, session: n}
	} else {
		chg := (last.Close/prev.Close - 1) * 100
		var h string
		switch {
		case math.Abs(chg) < 0.05:
			h = c.Short + " ends flat in quiet trading"
		case chg > 0:
			h = c.Short + " rises " + pctText(chg) + " as " + upReasons[r.pick(len(upReasons))]
		default:
			h = c.Short + " falls " + pctText(-chg) + " as " + downReasons[r.pick(len(downReasons))]
		}
		first = article{Article: Article{
			Headline: h,
			KeyPoints: []string{"Closed at $" + strconv.FormatFloat(last.Close, 'f', 2, 64),
				"Volume " + humanCount(float64(last.Volume)) + " shares"},
		}, session: n - 1}
	}
	out := []article{first}
	segs := sectorSegments[c.Sector]
	used := map[int]bool{}
	for len(out) < 5 {
		k := r.pick(8)
		if used[k] {
			continue
		}
		used[k] = true
		s := n - 2 - r.pick(min(20, n-2)) // an earlier session, within about a month
		price := bs[s].Close
		seg := segs[r.pick(len(segs))]
		var a Article
		switch k {
		case 0:
			a = Article{Headline: c.Short + " beats quarterly estimates on " + drivers[r.pick(len(drivers))],
				KeyPoints: []string{"Revenue up " + strconv.Itoa(3+r.pick(20)) + "% year over year", "Full-year guidance raised"}}
		case 1:
			a = Article{Headline: c.Short + " misses revenue forecast as " + headwinds[r.pick(len(headwinds))],
				KeyPoints: []string{"Revenue " + strconv.Itoa(1+r.pick(4)) + "% below consensus", "Outlook kept unchanged"}}
		case 2:
			pt := math.Round(float64(price * r.between(1.08, 1.3)))
			a = Article{Headline: "Analysts lift " + c.Short + " price target to $" + strconv.FormatFloat(pt, 'f', 0, 64),
				KeyPoints: []string{strconv.Itoa(10+r.pick(20)) + " of 35 analysts rate it a buy", "Target implies upside from $" + strconv.FormatFloat(price, 'f', 2, 64)}}
		case 3:
			a = Article{Headline: c.Short + " announces $" + strconv.Itoa(1+r.pick(40)) + "B share buyback",
				KeyPoints: []string{"Program runs through 2028", "Dividend kept unchanged"}}
		case 4:
			a = Article{Headline: c.Short + " names a new chief financial officer",
				KeyPoints: []string{"Outgoing CFO stays as adviser", "Appointment effective January 1"}}
		case 5:
			a = Article{Headline: c.Short + " expands " + seg + " partnership",
				KeyPoints: []string{"Multi-year agreement", "Financial terms not disclosed"}}
		case 6:
			a = Article{Headline: "Regulators review " + c.Short + " " + seg + " practices",
				KeyPoints: []string{"Inquiry is at an early stage", "Company says it will cooperate"}}
		case 7:
			dir := "higher"
			if r.float() < 0.4 {
				dir = "lower"
			}
			a = Article{Headline: c.Short + " guides " + dir + " for fiscal 2027",
				KeyPoints: []string{"Cites " + seg + " trends", "Capital spending plan unchanged"}}
		}
		out = append(out, article{Article: a, session: s})
	}
	for i := range out {
		out[i].Source = publications[r.pick(len(publications))]
		out[i].Tickers = []string{c.Ticker}
	}
	return out
}

var stopWords = map[string]bool{"the": true, "a": true, "an": true, "and": true, "or": true, "of": true, "for": true,
	"to": true, "in": true, "on": true, "as": true, "at": true, "by": true, "with": true, "is": true, "are": true, "its": true}

// words splits s into lower-case words of letters, digits and '&', without
// stop words.
func words(s string) []string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '&')
	})
	out := f[:0]
	for _, w := range f {
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// queryTerms are the terms of a search_news query: each whitespace- or
// comma-separated token that names a ticker of the universe (in any form
// Normalize accepts) stands for that ticker; the others are split into
// words.
type queryTerm struct {
	ticker string   // canonical ticker, or ""
	names  []string // words of the ticker's company short name
	word   string
}

func queryTerms(q string) []queryTerm {
	var out []queryTerm
	for _, tok := range strings.FieldsFunc(q, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' || r == '\r' }) {
		if t, ok := Normalize(tok); ok {
			out = append(out, queryTerm{ticker: t, names: words(bySymbol[t].Short)})
			continue
		}
		for _, w := range words(tok) {
			out = append(out, queryTerm{word: w})
		}
	}
	return out
}

// searchNews scores every article against the query and returns the best
// limit of them, with the number of matches. An article's score is the mean,
// over the query's terms, of its best match for the term (1 for a ticker it
// is about; 0.8 a word of its company's name; 0.5 a headline word; 0.3 a key
// point word), times a recency factor (1 less 0.01 per session of age),
// rounded to 2 decimals. Ties go to the more recent, then the earlier
// generated article. ok is false if the query has no searchable term.
func searchNews(q string, limit int) (News, bool) {
	terms := queryTerms(q)
	if len(terms) == 0 {
		return News{}, false
	}
	type hit struct {
		i     int
		score float64
	}
	var hits []hit
	all := articles()
	for i := range all {
		a := &all[i]
		sum := 0.0
		for _, t := range terms {
			switch {
			case t.ticker != "" && slices.Contains(a.Tickers, t.ticker):
				sum++
			case t.ticker != "":
				// A ticker query term matches the name words of other articles
				// only through its company's name: e.g. "V" is not the word "v".
				best := 0.0
				for _, w := range t.names {
					best = max(best, min(a.words[w], 0.5))
				}
				sum += best
			default:
				sum += a.words[t.word]
			}
		}
		if sum == 0 {
			continue
		}
		age := float64(Sessions - 1 - a.session)
		score := round2(float64(sum/float64(len(terms))) * (1 - float64(0.01*age)))
		if score > 0 {
			hits = append(hits, hit{i, score})
		}
	}
	slices.SortStableFunc(hits, func(x, y hit) int {
		switch {
		case x.score != y.score:
			if x.score > y.score {
				return -1
			}
			return 1
		case all[x.i].session != all[y.i].session:
			return all[y.i].session - all[x.i].session
		}
		return x.i - y.i
	})
	out := News{Query: q, Results: []Article{}, TotalMatches: len(hits), Source: Source, AsOf: AsOf}
	for _, h := range hits[:min(limit, len(hits))] {
		a := all[h.i].Article
		a.Relevance = h.score
		out.Results = append(out.Results, a)
	}
	return out, true
}
