package search

import (
	"slices"
	"sort"
	"strings"
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

// Index is an immutable BM25F index of a set of tools. It is safe for
// concurrent use.
type Index struct {
	docs     []doc
	post     map[string][]posting
	vocab    map[byte][]string // the terms, by first byte: for typos
	avgLen   [nFields]float64
	byName   map[string]int
	famDF    map[string]int          // a family word's number of tools with it in their family
	families []string                // the words that name a family (see namesFamily)
	fams     []famInfo               // the families by name, sorted
	famOf    []int32                 // each tool's family, an index into fams (-1: none)
	named    map[string]bool         // the words of tools' names other than verbs: what tools act on
	ops      map[string][]int32      // a term of a top-level argument's enum values (an "action": create, update…) → its tools
	writers  []int32                 // the tools named after what one writes, with no verb (issues_comment)
	srcOf    []int32                 // each tool's server, an index into srcNorm (-1: none)
	srcPost  map[string][]srvPosting // a term's servers, with its frequency over all their tools' text
	srcNorm  []float64               // each server's BM25 length normalization
	// dateFamily: a family is named after a word said as a date (a day
	// of the week), so that date must be told from it (see dropDates).
	dateFamily  bool
	lx          *Lexicon
	tn          *tuning  // the tuned numbers (tuning.go)
	reranker    Reranker // besides Lexical, if not nil (see Options)
	rerankDepth int
}

type doc struct {
	tool *tools.Tool
	len  [nFields]float32
	name []string // distinct terms of the name's action words
	ctx  []string // terms its summary and description say only outside a verb's object (see directTerms)
	head string   // the last term of the name's action words that is not a verb: what it acts on
	verb []string // the verbs among name
	// family is the name of its family as a caller may search it: its
	// server, or the name prefix it shares ("" if none).
	family string
	// nameIDF is each term of name's idf, and nameVerb whether it is a
	// verb (worked out once, read by every search).
	nameIDF  []float64
	nameVerb []bool
}

// srvPosting is a term's frequency in a server's tools' text.
type srvPosting struct {
	srv int32
	tf  float32
}

type posting struct {
	doc int32
	tf  [nFields]float32
}

// New indexes ts, with the built-in word knowledge.
func New(ts []*tools.Tool) *Index { return NewWith(ts, Options{}) }

// Options configure an Index beyond its tools. The zero value is the
// built-in ranking.
type Options struct {
	// Lexicon is the word knowledge the index reads text with; nil: the
	// built-in (see LoadLexicon for adding a domain's words).
	Lexicon *Lexicon
	// Reranker, if not nil, reorders the best RerankDepth tools of the
	// lexical ranking (see Reranker); nil: the lexical ranking alone.
	Reranker Reranker
	// RerankDepth is how many of the lexical ranking's best tools the
	// Reranker reorders; 0: 20.
	RerankDepth int
	// tuning replaces the embedded tuned numbers (for tests).
	tuning *tuning
}

// NewWith indexes ts with the options o.
func NewWith(ts []*tools.Tool, o Options) *Index {
	lx := o.Lexicon
	if lx == nil {
		lx = builtin()
	}
	depth := o.RerankDepth
	if depth <= 0 {
		depth = 20
	}
	tn := o.tuning
	if tn == nil {
		tn = builtinTuning()
	}
	ix := &Index{lx: lx, tn: tn, reranker: o.Reranker, rerankDepth: depth, docs: make([]doc, 0, len(ts)), post: map[string][]posting{}, byName: map[string]int{}, named: map[string]bool{}, ops: map[string][]int32{}}
	var valid []*tools.Tool
	for _, t := range ts {
		if t != nil {
			valid = append(valid, t)
		}
	}
	fams := lx.familiesOf(valid)
	var total [nFields]float64
	tf := map[string]*[nFields]float32{}
	direct := map[string]bool{}
	for i, t := range valid {
		d := doc{tool: t}
		fam, action := fams[i].family, fams[i].action
		d.family = fam
		if upstream(t.Source) {
			d.family = t.Source
		}
		summary, rest := summaryOf(t.Description)
		if t.Title != "" {
			// A title often says in words what the name abbreviates
			// ("Map a website" for firecrawl_map).
			summary = t.Title + ". " + summary
		}
		texts := [nFields]string{action, fam, summary, rest, paramText(t.InputSchema)}
		clear(tf)
		for f, text := range texts {
			for _, w := range lx.indexTerms(capText(text, MaxFieldBytes)) {
				c := tf[w]
				if c == nil {
					c = new([nFields]float32)
					tf[w] = c
				}
				c[f]++
				d.len[f]++

			}
			total[f] += float64(d.len[f])
		}
		d.head = lx.nameHead(action)
		clear(direct)
		lx.directTerms(summary, direct)
		lx.directTerms(rest, direct)
		for w, c := range tf {
			if (c[fSummary] > 0 || c[fDesc] > 0) && !direct[w] {
				d.ctx = append(d.ctx, w)
			}
			ix.post[w] = append(ix.post[w], posting{doc: int32(len(ix.docs)), tf: *c})
			if c[fName] > 0 {
				d.name = append(d.name, w)
			}
		}
		sort.Strings(d.name)
		for _, w := range d.name {
			if lx.verbs[w] {
				d.verb = append(d.verb, w)
			} else {
				ix.named[w] = true
			}
		}
		if len(d.verb) == 0 && lx.writable[d.head] {
			ix.writers = append(ix.writers, int32(len(ix.docs)))
		}
		for _, w := range lx.enumTerms(t.InputSchema) {
			ix.ops[w] = append(ix.ops[w], int32(len(ix.docs)))
		}
		ix.byName[t.Name] = len(ix.docs)
		ix.docs = append(ix.docs, d)
	}
	ix.buildServers()
	ix.buildFamilies()
	ix.famDF = map[string]int{}
	ix.vocab = map[byte][]string{}
	for w, ps := range ix.post {
		for _, p := range ps {
			if p.tf[fFamily] > 0 {
				ix.famDF[w]++
			}
		}
		ix.vocab[w[0]] = append(ix.vocab[w[0]], w)
	}
	// In order, so that typos finds the same near words whatever the
	// map's order (it stops at three): a search's ranking must not change
	// from one build of the index to the next.
	for _, ws := range ix.vocab {
		sort.Strings(ws)
	}
	for _, t := range lx.dateTerms {
		ix.dateFamily = ix.dateFamily || ix.famDF[t] > 0
	}
	for w := range ix.famDF {
		if ix.namesFamily(w) {
			ix.families = append(ix.families, w)
		}
	}
	sort.Strings(ix.families)
	for i := range ix.docs {
		d := &ix.docs[i]
		d.nameIDF = make([]float64, len(d.name))
		d.nameVerb = make([]bool, len(d.name))
		for k, w := range d.name {
			d.nameIDF[k] = ix.idf(w)
			d.nameVerb[k] = lx.verbs[w]
		}
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

// summaryOf splits a description into its first sentence and the rest.
// The first sentence is that of the first line with words in it, past
// headings ("🎯 Purpose:", "## Usage") and list markers, as long
// descriptions of real servers are often laid out.
func summaryOf(desc string) (summary, rest string) {
	desc = capText(desc, 2*MaxFieldBytes)
	lines := strings.Split(desc, "\n")
	for i, line := range lines {
		l := strings.TrimSpace(line)
		l = strings.TrimLeft(l, "#*-•>0123456789.) \t")
		if !strings.ContainsFunc(l, unicode.IsLetter) || strings.HasSuffix(l, ":") && len(l) < 48 {
			continue
		}
		sum := l
		if j := strings.Index(l, ". "); j > 0 {
			sum = l[:j+1]
		}
		after := strings.TrimPrefix(l, sum)
		return sum, after + "\n" + strings.Join(lines[i+1:], "\n")
	}
	return "", desc
}

// enumTerms returns the distinct terms of the string enum values of s's
// properties (the first 32 values of each, about maxOps terms in all).
func (lx *Lexicon) enumTerms(s *jsonschema.Schema) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, p := range s.Properties {
		if p == nil {
			continue
		}
		for i, e := range p.Enum {
			if str, ok := e.(string); ok && i < 32 && len(out) < maxOps {
				out = append(out, lx.terms(capText(str, 64))...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
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
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			p := s.Properties[name]
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

// maxOps bounds the enum terms indexed for one tool (see enumTerms).
const maxOps = 256

// nameHead returns what a tool's name (its action words) acts on: the
// last term before any preposition that is not a verb (nor HTTP's PUT:
// api_put acts on what its arguments say) — a verb's word counts as a noun
// after a noun, other than the name's own verb — or the last of several
// verbs.
func (lx *Lexicon) nameHead(action string) string {
	// What a name acts on comes before its preposition: add_comment_to_issue
	// adds comments, get_cards_by_list gets cards.
	if ws := strings.Fields(action); len(ws) > 2 {
		for i, w := range ws[1:] {
			if lx.namePrepositions[w] {
				if before := lx.terms(strings.Join(ws[:i+1], " ")); slices.ContainsFunc(before, func(t string) bool { return !lx.verbs[t] }) {
					action = strings.Join(ws[:i+1], " ")
				}
				break
			}
		}
	}
	head := ""
	ts := lx.terms(action)
	// The name's own verb is its first word, or else its last verb; a
	// verb's word elsewhere is a noun (orders_refunds_create makes refunds).
	own := -1
	for i, t := range ts {
		if lx.verbs[t] && (i == 0 || own != 0) {
			own = i
		}
	}
	for i, t := range ts {
		if (!lx.verbs[t] || own >= 0 && i != own && i > 0 && !lx.verbs[ts[i-1]]) && !lx.genericNameVerbs[t] {
			head = t
		}
	}
	// Marking acts on what follows the verb, the rest its new state
	// (mark_todo_done, markIssueFalsePositive).
	if own >= 0 && lx.markingVerbs[ts[own]] {
		for _, t := range ts[own+1:] {
			if !lx.verbs[t] {
				return t
			}
		}
	}
	// A name of verbs only acts on its last, a noun there (create_refund).
	if head == "" && len(ts) > 1 {
		head = ts[len(ts)-1]
	}
	return head
}

// directTerms adds to out the terms of text that it says at least once in
// the object of a verb: the words after the verb up to a preposition, a
// clause's end or a word that starts another clause ("Delete records from
// a table": records, not table; "If the database does not exist, it is
// created": not database). A parenthesis or a list goes on with the
// object ("an engagement (Note or Task)", "an array of documents").
func (lx *Lexicon) directTerms(text string, out map[string]bool) {
	obj := false // in the object of a verb
	var buf []byte
	prev := ""
	word := func() {
		if len(buf) == 0 {
			return
		}
		lw := string(buf)
		buf = buf[:0]
		pw := prev
		prev = lw
		if p, ok := lx.pairs[[2]string{pw, lw}]; ok && lx.verbs[p] {
			obj = true // "spin up a module"
			return
		}
		if lx.prepositions[lw] || lx.clauseWords[lw] {
			obj = false
			return
		}
		t, ts := lx.wordTerm(lw)
		if t != "" {
			if lx.verbs[t] {
				obj = true
			} else if obj {
				out[t] = true
			}
			return
		}
		for _, t := range ts {
			if lx.verbs[t] {
				obj = true
				return
			}
		}
		if obj {
			for _, t := range ts {
				out[t] = true
			}
		}
	}
	for _, r := range capText(text, MaxFieldBytes) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			continue
		}
		word()
		switch r {
		case '.', ';', ':', '!', '?', '\n':
			obj = false
		}
	}
	word()
}

// buildServers gathers each server's terms over all its tools' text (see
// serverScores).
func (ix *Index) buildServers() {
	byName := map[string]int32{}
	var lens []float64
	ix.srcOf = make([]int32, len(ix.docs))
	for i := range ix.docs {
		src := ix.docs[i].tool.Source
		if !upstream(src) {
			ix.srcOf[i] = -1
			continue
		}
		k, ok := byName[src]
		if !ok {
			k = int32(len(lens))
			byName[src] = k
			lens = append(lens, 0)
		}
		ix.srcOf[i] = k
	}
	ix.srcPost = map[string][]srvPosting{}
	for w, ps := range ix.post {
		var out []srvPosting
		for _, p := range ps {
			k := ix.srcOf[p.doc]
			if k < 0 {
				continue
			}
			var tf float32
			for f := 0; f < nFields; f++ {
				tf += p.tf[f]
			}
			lens[k] += float64(tf)
			// Postings are in document order, and a server's tools are
			// not always together: find its entry.
			at := slices.IndexFunc(out, func(s srvPosting) bool { return s.srv == k })
			if at < 0 {
				out = append(out, srvPosting{srv: k, tf: tf})
			} else {
				out[at].tf += tf
			}
		}
		if out != nil {
			ix.srcPost[w] = out
		}
	}
	var avg float64
	for _, l := range lens {
		avg += l
	}
	if len(lens) > 0 {
		avg /= float64(len(lens))
	}
	ix.srcNorm = make([]float64, len(lens))
	for k, l := range lens {
		ix.srcNorm[k] = 1 - ix.tn.serverB + ix.tn.serverB*l/max(avg, 1)
	}
}

// readsOnly reports whether all of d's verbs read (get, list, search, or
// a synonym of get).
func (d *doc) readsOnly(lx *Lexicon) bool {
	for _, v := range d.verb {
		if !slices.Contains(lx.readVerbs, v) && !slices.Contains(lx.synonyms[lx.getVerb], v) {
			return false
		}
	}
	return true
}
