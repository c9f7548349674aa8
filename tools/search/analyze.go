package search

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// The analyze stage: a request's text becomes a query — its literals
// stripped, its everyday phrasings rephrased, its words cut, stemmed and
// weighed by the part of the request they are in, each grouped with its
// synonyms, typos and related words, and what the request implies and
// asks (its verbs, whether it is a question, the families it names).

// query is a request as the analyze stage reads it; the later stages only
// read it (but for the capitalized words, computed once when first asked).
type query struct {
	lx     *Lexicon
	text   string // as given, capped at MaxQueryBytes
	plain  string // its literals and the names it gives stripped, rephrased
	exact  int    // the tool it names exactly, or -1
	groups []group
	// inQuery is each term's weight as a query word (1) or a synonym.
	inQuery map[string]float64
	// concepts is what the request implies (see concepts): a concept's
	// first term → its other terms.
	concepts map[string][]string
	// gerund are the verbs it says only as a state (see gerundOnly).
	gerund   map[string]bool
	question bool
	// action is the verbs it asks for, with their synonyms; qVerb that it
	// has some; writeOnly that all of them change something.
	action           map[string]bool
	qVerb, writeOnly bool
	// specific: some word other than a generic verb is used by at most an
	// eighth of the catalog (see analyze).
	specific   bool
	coverTotal float64 // the sum of the groups' cover
	floor      float64 // the least confidence of its best fits
	// unknownName: it names, capitalized, something the catalog does not
	// know (see namesUnknown).
	unknownName bool
	// famNamed: it names a family for sure (see sureFamily).
	famNamed bool
	caps     map[string]bool // its capitalized words (see capitalized), when asked
}

// group is one query word with its synonyms.
type group struct {
	terms  []string  // the word, then its synonyms
	weight []float64 // 1 for the word, synonym-weight for a synonym
	idf    []float64
	cover  float64  // the group's weight in the query's coverage
	qw     float64  // the weight of the word's sentence (see queryTerms)
	alts   []string // all its synonyms, also those another word of the query has
}

// idf is a term's inverse document frequency in the index.
func (ix *Index) idf(w string) float64 {
	n := float64(len(ix.docs))
	df := float64(len(ix.post[w]))
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// analyze reads text as a query of the index's catalog; nil when it has
// no word to search and names no tool, or the index is empty.
func (ix *Index) analyze(text string) *query {
	lx := ix.lx
	text = capText(text, MaxQueryBytes)
	q := &query{lx: lx, text: text, exact: -1}
	for _, w := range strings.Fields(text) {
		w = strings.TrimSuffix(strings.TrimPrefix(strings.Trim(w, "`'\".,;:!?"), "tools."), "()")
		if i, ok := ix.byName[w]; ok {
			q.exact = i
			break
		}
	}
	stripped, kinds := lx.stripLiterals(text, func(t string) bool { return len(ix.post[t]) > 0 })
	plain := lx.rephrase(ix.joinCamel(ix.stripNames(stripped)))
	if ix.dateFamily && lx.date.MatchString(plain) {
		plain = ix.dropDates(plain)
	}
	for _, s := range lx.suiteWords {
		if ts := lx.terms(s); len(ts) == 1 && ix.famDF[ts[0]] > 0 {
			plain = lx.bareSuite(plain, s)
		}
	}
	q.plain = plain
	terms, qw := lx.queryTerms(plain, ix.tn)
	// hint adds a term the query implies but does not say, at synonym
	// weight.
	hint := func(t string) {
		if !slices.Contains(terms, t) {
			terms = append(terms, t)
			if qw == nil {
				qw = map[string]float64{}
			}
			qw[t] = ix.tn.synonymWeight
		}
	}
	// What a phrase implies: "how many …" asks for a count, which a tool
	// may do; "how far" a distance, "how long" a time.
	lower := strings.ToLower(plain)
	for _, h := range lx.containsHints {
		if strings.Contains(lower, h.phrase) {
			hint(h.term)
		}
	}
	// What a request implies in words no tool uses: "who changed it?" a
	// history (see concepts). Its terms are one group, any of which a
	// tool may say.
	cu := &cue{lower: lower, query: text, words: lowerWords(plain), kinds: kinds}
	for i := range lx.concepts {
		c := &lx.concepts[i]
		if lx.says(c, cu) && (!slices.Contains(terms, c.terms[0]) || qw[c.terms[0]] > 0 && qw[c.terms[0]] < ix.tn.conceptWeight) {
			hint(c.terms[0])
			qw[c.terms[0]] = ix.tn.conceptWeight
			if q.concepts == nil {
				q.concepts = map[string][]string{}
			}
			q.concepts[c.terms[0]] = c.terms[1:]
		}
	}
	// What a word implies: "who …?" asks for people, users.
	if len(lx.wordHints) > 0 {
		ws := lowerWords(plain)
		for _, h := range lx.wordHints {
			if slices.ContainsFunc(ws, func(w string) bool { return h.words[strings.ReplaceAll(w, "’", "'")] }) {
				hint(h.term)
			}
		}
	}
	// A literal's kind says what the tool takes: a URL a page, a path a
	// file ("grab the text of https://…", "last 50 lines of /var/log/…").
	for _, k := range kinds {
		if t, ok := lx.kindHints[k]; ok {
			hint(t)
		}
	}
	terms = dedupe(append(terms, ix.compounds(plain)...))
	if len(terms) > MaxQueryTerms {
		terms = terms[:MaxQueryTerms]
	}
	if (len(terms) == 0 && q.exact < 0) || len(ix.docs) == 0 {
		return nil
	}
	// A verb the query says only as a participle is a state, not
	// the action ("cancel the pipeline that is running"): it weighs as
	// context and does not count as the query's verb.
	q.gerund = lx.gerundOnly(plain)
	q.inQuery = map[string]float64{}
	for _, w := range terms {
		q.inQuery[w] = 1
	}
	q.groups = make([]group, 0, len(terms))
	for _, w := range terms {
		q.groups = append(q.groups, ix.group(q, w, terms, qw))
	}
	q.question = lx.isQuestion(text)
	// A short query that names, capitalized, something the catalog does
	// not know ("create a Jira ticket") asks for a thing no tool has.
	q.unknownName = len(q.groups) <= ix.tn.brandMaxGroups && ix.namesUnknown(plain)
	// specific: some query word other than a generic verb (get, show,
	// create, …) is used by at most an eighth of the catalog. A query of
	// common words only ("get the list of names") fits a tool only when it
	// says most of the tool's name ("create pull request" for
	// create_pull_request, in a catalog where every tool of a large family
	// speaks of pull requests).
	n := float64(len(ix.docs))
	for _, g := range q.groups {
		q.coverTotal += g.cover
		if df := len(ix.post[g.terms[0]]); df > 0 && float64(df) <= max(float64(ix.tn.specificDF), ix.tn.specificShare*n) && (!lx.verbs[g.terms[0]] || lx.specificVerbs[g.terms[0]]) {
			q.specific = true
		}
	}
	// A long request carries context (names, places, what it is for)
	// that no tool's text says: its floor falls from min-confidence at
	// short-query words to long-floor × min-confidence at long-query words
	// (tuning.txt).
	q.floor = ix.tn.minConfidence
	if nw := float64(len(q.groups)); nw > ix.tn.shortQuery {
		q.floor *= max(ix.tn.longFloor, 1-(1-ix.tn.longFloor)*(nw-ix.tn.shortQuery)/(ix.tn.longQuery-ix.tn.shortQuery))
	}
	q.readAction()
	q.famNamed = slices.ContainsFunc(q.groups, func(g group) bool { return ix.sureFamily(q, g.terms[0]) })
	return q
}

// group groups w, a word of the query (of terms, weighed by qw), with its
// synonyms, typos, derived and related words.
func (ix *Index) group(q *query, w string, terms []string, qw map[string]float64) group {
	lx := ix.lx
	// A word that begins a family's name and names no family itself is
	// the family ("mongo" for mongodb, which descriptions write MongoDB,
	// split as mongo db).
	if fw := ix.familyPrefixed(w); fw != "" {
		w = fw
	}
	g := group{terms: []string{w}, weight: []float64{1}, idf: []float64{ix.idf(w)}, qw: 1}
	if x, ok := qw[w]; ok && !ix.namesFamily(w) {
		g.qw = x
	}
	if q.gerund[w] {
		g.qw = min(g.qw, ix.tn.contextWeight)
	}
	alts := lx.synonyms[w]
	var typos []string
	if len(ix.post[w]) == 0 {
		typos = ix.typos(w)
		if lx.knownWord(w) {
			typos = ix.familyPrefixes(typos, w)
		}
	}
	// The noun of a verb, and the verb of a noun ("associate" and
	// associations, "attach" and upload_attachment): at derived-weight.
	nTypos := len(typos)
	typos = append(typos, ix.derived(w)...)
	if len(typos) > 0 {
		alts = append(typos, alts...)
	}
	if lx.changes[w] || lx.fieldVerbs[w] && lx.hasField(terms) {
		alts = append(append(slices.Clone(alts), lx.updateVerb), lx.synonyms[lx.updateVerb]...)
	}
	alts = append(slices.Clone(alts), lx.oneWay[w]...)
	g.alts = alts
	for _, s := range q.concepts[w] {
		if _, ok := q.inQuery[s]; !ok {
			g.terms = append(g.terms, s)
			g.weight = append(g.weight, 1)
			g.idf = append(g.idf, ix.idf(s))
			q.inQuery[s] = ix.tn.synonymWeight
		}
	}
	for k, s := range alts {
		if _, ok := q.inQuery[s]; ok {
			continue
		}
		wt := ix.tn.synonymWeight
		if k < nTypos {
			wt = ix.tn.typoWeight
		} else if k < len(typos) {
			wt = ix.tn.derivedWeight
		}
		g.terms = append(g.terms, s)
		g.weight = append(g.weight, wt)
		g.idf = append(g.idf, ix.idf(s))
		q.inQuery[s] = max(q.inQuery[s], wt)
	}
	// A word the catalog never uses also matches its related words in
	// WordNet (big → size, remind → reminder), at related-weight.
	var arg bool
	if len(ix.post[w]) == 0 {
		var rel []string
		rel, arg = related(w)
		for _, s := range rel {
			if _, ok := q.inQuery[s]; ok || len(ix.post[s]) == 0 {
				continue
			}
			g.terms = append(g.terms, s)
			g.weight = append(g.weight, ix.tn.relatedWeight)
			g.idf = append(g.idf, ix.idf(s))
			q.inQuery[s] = ix.tn.relatedWeight
		}
	}
	// A word the catalog never uses weighs as the rarest (it is what
	// no tool does), unless a synonym stands for it.
	maxIDF := math.Log(1 + (float64(len(ix.docs))+0.5)/0.5)
	g.cover = maxIDF
	if len(ix.post[w]) > 0 {
		g.cover = g.idf[0]
	} else {
		for i, s := range g.terms[1:] {
			if len(ix.post[s]) > 0 {
				g.cover = min(g.cover, g.idf[i+1])
			}
		}
	}
	g.cover *= g.qw
	if arg && g.cover == maxIDF*g.qw {
		g.cover *= ix.tn.argCover // a date, a person, a place: an argument
	}
	return g
}

// readAction reads the query's action: the verbs it says, and for a
// question ("which merge requests are open?"), reading.
func (q *query) readAction() {
	lx := q.lx
	q.action = map[string]bool{}
	// "New" is an action only in a query with no verb ("new issue"); "for
	// the new hire" asks no creation.
	others := false
	for _, g := range q.groups {
		others = others || lx.verbs[g.terms[0]] && !lx.loneVerbs[g.terms[0]] && !q.gerund[g.terms[0]] && g.qw >= 1
	}
	for _, g := range q.groups {
		if lx.verbs[g.terms[0]] && !q.gerund[g.terms[0]] && g.qw >= 1 && !(lx.loneVerbs[g.terms[0]] && others) {
			q.action[g.terms[0]] = true
			for _, t := range g.alts {
				q.action[t] = true
			}
		}
	}
	q.qVerb = len(q.action) > 0
	// A request that asks only for a change ("make the header bold") is
	// not served by a tool that only reads (get_sheet_formatting, whose
	// description lists bold).
	q.writeOnly = q.qVerb && !q.question
	for _, v := range lx.readVerbs {
		if q.action[v] {
			q.writeOnly = false
		}
	}
}

// sureFamily reports whether w names a family for sure: a family's word
// that is no common English word, or one the query writes capitalized
// mid-sentence ("in Plane"; not "how much memory does the pod use" in a
// catalog with a memory server).
func (ix *Index) sureFamily(q *query, w string) bool {
	lx := ix.lx
	if !ix.namesFamily(w) {
		return false
	}
	if rel, arg := related(w); len(rel) == 0 && !arg {
		return true
	}
	if q.caps == nil {
		q.caps = lx.capitalized(q.text)
	}
	return q.caps[w]
}

// derived returns the terms of the catalog's tool names that are w's noun
// or verb by a regular suffix: -ion, -ation and -ment after a verb's stem
// (associat → association, configur → configuration, attach →
// attachment), and back. (Any term of the catalog, not only names', cost
// 11 to 17 no-match requests on the sets then seen: "enroll" met
// enrollment in descriptions.)
func (ix *Index) derived(w string) []string {
	if len(w) < 5 {
		return nil // "pay run" is no payment
	}
	var out []string
	add := func(t string) {
		if t != w && len(t) >= 4 && len(ix.post[t]) > 0 && ix.named[t] && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, suf := range ix.lx.derivations {
		if strings.HasSuffix(w, suf) {
			add(strings.TrimSuffix(w, suf))
		} else {
			add(w + suf)
		}
	}
	return out
}

// joinCamel lower-cases the camelCase words of query that the index has
// whole, so that a brand a request spells HubSpot, GitLab or MongoDB meets
// the family hubspot, gitlab or mongodb rather than the words hub and
// spot.
func (ix *Index) joinCamel(query string) string {
	var b strings.Builder
	start := -1
	flush := func(end int) {
		w := query[start:end]
		if l := strings.ToLower(w); l != w && len(words(w)) > 1 {
			if _, ok := ix.post[stem(l)]; ok {
				w = l
			}
		}
		b.WriteString(w)
		start = -1
	}
	for i, r := range query {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			flush(i)
		}
		b.WriteRune(r)
	}
	if start >= 0 {
		flush(len(query))
	}
	return b.String()
}

// compounds returns the index terms that two adjacent words of query
// make when joined ("on call" → oncall, "web hook" → webhook), when the
// index has them.
func (ix *Index) compounds(query string) []string {
	lx := ix.lx
	ws := words(query)
	var out []string
	for i := 0; i+1 < len(ws) && i < 2*MaxQueryTerms; i++ {
		if lx.stop[strings.ToLower(ws[i])] && lx.stop[strings.ToLower(ws[i+1])] && !strings.Contains(strings.ToLower(query), strings.ToLower(ws[i]+"-"+ws[i+1])) {
			continue // "do I" is not "doi"
		}
		j := stem(strings.ToLower(ws[i] + ws[i+1]))
		if _, ok := ix.post[j]; ok {
			out = append(out, j)
		}
	}
	return out
}

// typos returns the index terms one edit (a letter added, dropped,
// changed, or two swapped) from w, a query word of at least five letters
// the index lacks, with the same first letter; for a word of four
// letters, only a letter dropped (indx → index). A word of at least four
// letters also matches the family words it begins (mongo → mongodb).
func (ix *Index) typos(w string) []string {
	if len(w) < 4 || !isASCII(w) {
		return nil
	}
	var out []string
	for _, v := range ix.vocab[w[0]] {
		d := len(v) - len(w)
		typo := d >= -1 && d <= 1 && len(v) >= 4 && (len(w) >= 5 || d == 1 || d == 0 && swapped(w, v)) && oneEdit(w, v)
		prefix := d > 0 && ix.famDF[v] > 0 && strings.HasPrefix(v, w)
		if typo || prefix {
			out = append(out, v)
			if len(out) == 3 {
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// swapped reports whether a and b, of one length, differ by two letters
// side by side swapped (dorp, drop).
func swapped(a, b string) bool {
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
}

// oneEdit reports whether a and b (ASCII) are one edit apart.
func oneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if i == len(a) {
		return len(b)-len(a) == 1
	}
	if len(a) == len(b) {
		if a[i+1:] == b[i+1:] {
			return true // changed
		}
		return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:] // swapped
	}
	return a[i:] == b[i+1:] // added
}

// hasField reports whether terms has a word of fields.
func (lx *Lexicon) hasField(terms []string) bool {
	for _, t := range terms {
		if lx.fields[t] {
			return true
		}
	}
	return false
}

// namesUnknown reports whether query has a capitalized word after a
// determiner ("a Jira ticket", "my Spotify playlist") that the index does
// not know, nor a word one typo from it: a thing of another service,
// rather than the name of a place or a person an argument gives ("the
// elevation of Denver").
func (ix *Index) namesUnknown(query string) bool {
	lx := ix.lx
	for _, s := range sentences(query) {
		ws := words(s)
		for i, w := range ws {
			r := []rune(w)
			if i == 0 || len(r) < 2 || !isUpper(r[0]) || !lx.determiners[strings.ToLower(ws[i-1])] {
				continue
			}
			// The name of a folder, a button, a page (my Downloads
			// folder, the Submit button, the README file) is an
			// argument, not a service.
			if i+1 < len(ws) && lx.containers[strings.ToLower(ws[i+1])] {
				continue
			}
			ts := lx.terms(w)
			if len(ts) != 1 {
				continue
			}
			if _, ok := ix.post[ts[0]]; !ok && len(ix.typos(ts[0])) == 0 && len(lx.synonyms[ts[0]]) == 0 {
				return true
			}
		}
	}
	return false
}

// dropDates removes from q the dates it says (see Lexicon.date) that
// name a family: a date, not the server named after the day.
func (ix *Index) dropDates(q string) string {
	date := ix.lx.date
	return date.ReplaceAllStringFunc(q, func(m string) string {
		sub := date.FindStringSubmatch(m)
		if ix.famDF[stem(strings.ToLower(sub[2]))] == 0 {
			return m
		}
		return sub[1]
	})
}

// bareSuite drops suite, a suite's word (see words/services.txt), said
// alone, not before one of its products' names ("so Google shows rich
// results", "since the last Google update"): the company, not a catalog's
// family named after it, which the suite and a product ("Google Sheets")
// still names.
func (lx *Lexicon) bareSuite(q, suite string) string {
	if !strings.Contains(strings.ToLower(q), suite) {
		return q
	}
	trim := func(w string) string { return strings.ToLower(strings.Trim(w, ".,;:!?()'\"")) }
	ws := strings.Fields(q)
	out := ws[:0]
	for i, w := range ws {
		if lw := strings.TrimSuffix(strings.TrimSuffix(trim(w), "'s"), "’s"); lw == suite && (i+1 >= len(ws) || !lx.suites[suite][trim(ws[i+1])]) {
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// knownWord reports whether w, a query's term, is an English word the
// lexicon or WordNet knows: a word the catalog lacks, not a misspelling
// of one of its words ("send" is no typo of spend).
func (lx *Lexicon) knownWord(w string) bool {
	if lx.verbs[w] || len(lx.synonyms[w]) > 0 {
		return true
	}
	rel, arg := related(w)
	return len(rel) > 0 || arg
}

// familyPrefixes keeps of typos, w's, the family words w begins (mongo,
// mongodb).
func (ix *Index) familyPrefixes(typos []string, w string) []string {
	out := typos[:0]
	for _, v := range typos {
		if ix.famDF[v] > 0 && strings.HasPrefix(v, w) {
			out = append(out, v)
		}
	}
	return out
}
