package search

import (
	"slices"
	"strings"

	"github.com/sandcall/sandcall/tools"
)

// Families: a tool's family is the upstream server it comes from, or a
// first name word that at least two tools share and that is not a verb
// ("github_…"). A request that names a family for sure asks for its tools
// (the scope stage).

// scope keeps of all, when the query names a family for sure, that
// family's tools (and a tool it names exactly), and returns the tools of
// the families it names (nil if none) and, of those, the ones whose name
// has the query's verb: what a short request that names a family but
// that no tool fits above the floor falls back on, the service known and
// the action too. (Any tool of the family answered four more no-match
// requests for two more whole requests; this one cost none.)
func (ix *Index) scope(q *query, all []Hit) (kept []Hit, inFam map[int32]bool, fallback []Hit) {
	only := false // the family is named for sure: not a common word said in passing
	for _, g := range q.groups {
		if ix.namesFamily(g.terms[0]) {
			if inFam == nil {
				inFam = map[int32]bool{}
			}
			for _, p := range ix.post[g.terms[0]] {
				if p.tf[fFamily] > 0 {
					inFam[p.doc] = true
				}
			}
			only = only || ix.sureFamily(q, g.terms[0])
		}
	}
	// A request that names a family asks for its tools: the others are
	// not candidates ("… in Todoist"). Unless the family's name is a
	// common word said in lower case ("how much memory does the pod use"
	// and a memory server).
	if len(inFam) > 0 && only {
		in := all[:0]
		for _, h := range all {
			if inFam[int32(ix.byName[h.Tool.Name])] || h.Score >= 1e6 {
				in = append(in, h)
			}
		}
		all = in
	}
	if len(inFam) > 0 {
		for _, h := range all {
			i := int32(ix.byName[h.Tool.Name])
			if inFam[i] && q.agrees(&ix.docs[i]) == 1 {
				fallback = append(fallback, h)
			}
		}
	}
	return all, inFam, fallback
}

// namesAnyFamily reports whether a word of q names a family (see
// namesFamily).
func (ix *Index) namesAnyFamily(q *query) bool {
	for _, g := range q.groups {
		if ix.namesFamily(g.terms[0]) {
			return true
		}
	}
	return false
}

// namesFamily reports whether w, a query word, names a family: a word
// of some tools' family (not all tools') that the rest of the catalog
// hardly uses ("GitLab", "Postgres").
func (ix *Index) namesFamily(w string) bool {
	lx := ix.lx
	if lx.verbs[w] {
		return false
	}
	fd := ix.famDF[w]
	return fd > 0 && fd < len(ix.docs) && float64(fd) >= ix.tn.famShare*float64(len(ix.post[w]))
}

// familyPrefixed returns the family word that w, a query word of at least
// four letters that names no family, begins, if exactly one does and the
// tools that use w are mostly that family's (mongo, which descriptions
// write as MongoDB; not todo for todoist).
func (ix *Index) familyPrefixed(w string) string {
	if len(w) < 4 || ix.famDF[w] > 0 || !isASCII(w) {
		return ""
	}
	found := ""
	for _, v := range ix.families {
		if len(v) > len(w) && strings.HasPrefix(v, w) {
			if found != "" {
				return ""
			}
			found = v
		}
	}
	if found == "" || len(ix.post[w]) == 0 {
		return found
	}
	fam := map[int32]bool{}
	for _, p := range ix.post[found] {
		if p.tf[fFamily] > 0 {
			fam[p.doc] = true
		}
	}
	in := 0
	for _, p := range ix.post[w] {
		if fam[p.doc] {
			in++
		}
	}
	if float64(in) < ix.tn.famShare*float64(len(ix.post[w])) {
		return ""
	}
	return found
}

// family is a tool's family and the action words of its name.
type family struct{ family, action string }

// familiesOf splits each tool's name into its family and action words:
// the family is the upstream server the tool comes from when the name
// starts with it, else a first name word that at least two tools share and
// that is not a verb (github_…, k8s_…); the action is the rest of the name.
func (lx *Lexicon) familiesOf(ts []*tools.Tool) []family {
	first := map[string]int{}
	for _, t := range ts {
		if ws := nameWords(t.Name); len(ws) > 1 {
			first[ws[0]]++
		}
	}
	out := make([]family, len(ts))
	for i, t := range ts {
		ws := nameWords(t.Name)
		// The words the source's own spelling shows (assignIssue: assign
		// issue), after its family's.
		if t.SourceName != "" && t.Source != "" {
			sw, own := nameWords(t.Source), nameWords(t.SourceName)
			if len(own) > len(sw) && equalPrefix(own, sw) {
				own = own[len(sw):]
			}
			ws = append(sw, own...)
		}
		var fam []string
		if src := t.Source; upstream(src) {
			sw := nameWords(src)
			if len(ws) > len(sw) && equalPrefix(ws, sw) {
				fam, ws = ws[:len(sw)], ws[len(sw):]
			} else {
				fam = sw
			}
		} else if len(ws) > 1 && first[ws[0]] >= 2 && !lx.isVerb(ws[0]) {
			fam, ws = ws[:1], ws[1:]
		}
		out[i] = family{family: strings.Join(fam, " "), action: strings.Join(ws, " ")}
	}
	return out
}

// nameWords splits a name into lower-case words (snake_case, camelCase,
// kebab-case, dots).
func nameWords(name string) []string {
	ws := words(name)
	for i, w := range ws {
		ws[i] = strings.ToLower(w)
	}
	return ws
}

func equalPrefix(ws, prefix []string) bool {
	for i, p := range prefix {
		if ws[i] != p {
			return false
		}
	}
	return true
}

// isVerb reports whether w (a name word) is a verb a tool name starts with
// (get_…, list_…), never a family.
func (lx *Lexicon) isVerb(w string) bool {
	t := lx.terms(w)
	if len(t) != 1 {
		return false
	}
	_, ok := lx.verbs[t[0]]
	return ok
}

// upstream reports whether a tool's source is an upstream server (its
// name), not sandcall's own tools ("builtin", "local" scripts).
func upstream(source string) bool {
	return source != "" && source != "builtin" && source != "local"
}

// familyList returns the families of the tools keep accepts (all if keep
// is nil), by name, with how many of their tools it accepts.
func (ix *Index) familyList(keep func(*tools.Tool) bool) []Family {
	n := map[string]int{}
	for i := range ix.docs {
		d := &ix.docs[i]
		if d.family != "" && (keep == nil || keep(d.tool)) {
			n[d.family]++
		}
	}
	out := make([]Family, 0, len(n))
	for name, c := range n {
		out = append(out, Family{Name: name, Tools: c})
	}
	slices.SortFunc(out, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// famInfo is a family of the catalog: its name, the stems of its name's
// words, and its tools.
type famInfo struct {
	name  string
	words []string
	docs  []int32
}

// buildFamilies gathers the families by name (see doc.family).
func (ix *Index) buildFamilies() {
	byName := map[string][]int32{}
	for i := range ix.docs {
		if n := ix.docs[i].family; n != "" {
			byName[n] = append(byName[n], int32(i))
		}
	}
	for name, docs := range byName {
		fi := famInfo{name: name, docs: docs}
		for _, w := range nameWords(name) {
			fi.words = append(fi.words, stem(w))
		}
		ix.fams = append(ix.fams, fi)
	}
	slices.SortFunc(ix.fams, func(a, b famInfo) int { return strings.Compare(a.name, b.name) })
	ix.famOf = make([]int32, len(ix.docs))
	for i := range ix.famOf {
		ix.famOf[i] = -1
	}
	for k, fi := range ix.fams {
		for _, d := range fi.docs {
			ix.famOf[d] = int32(k)
		}
	}
}

// askedFamily returns the family q asks about as a whole (-1 if none):
//
//   - one whose name it says, with nothing more than words that ask for a
//     family's tools (the set family-words: server, tools, …), reading
//     verbs and stop words: "memory", "what can the memory server do",
//     "list the github tools";
//   - or, when it names no family, one that all its words describe, with
//     no verb but reading: at least min-wide-words words, each said by at
//     least family-wide of the family's tools and by at most
//     family-elsewhere of the others' ("knowledge graph", where every tool
//     of a memory server keeps one), in a family of at least
//     min-wide-family tools.
//
// A family of one tool is a tool, not a family to ask about.
func (ix *Index) askedFamily(q *query) int {
	if q.exact >= 0 || len(ix.fams) == 0 {
		return -1
	}
	lx := ix.lx
	// By name.
	said := make([]int, len(ix.fams)) // how many of each family's name words the query says
	named := true
	for _, w := range lowerWords(q.text) {
		s := stem(strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s"))
		hit := false
		for k, fi := range ix.fams {
			if slices.Contains(fi.words, s) {
				said[k]++
				hit = true
			}
		}
		if hit || lx.stop[w] || lx.familyWords[w] {
			continue
		}
		if t, _ := lx.wordTerm(w); lx.readGroup[t] {
			continue
		}
		named = false
		break
	}
	if named {
		best, tie := -1, false
		for k, fi := range ix.fams {
			if said[k] == 0 || len(fi.docs) < 2 || said[k] < len(fi.words) {
				continue
			}
			switch {
			case best < 0 || said[k] > said[best]:
				best, tie = k, false
			case said[k] == said[best]:
				tie = true
			}
		}
		if best >= 0 && !tie {
			return best
		}
	}
	// By what it does: not when it names a family (the first way's) or
	// asks for an action other than reading.
	for t := range q.action {
		if !lx.readGroup[t] {
			return -1
		}
	}
	if slices.ContainsFunc(q.groups, func(g group) bool { return ix.famDF[g.terms[0]] > 0 }) {
		return -1
	}
	fam := -1
	content := 0
	for _, g := range q.groups {
		w := g.terms[0]
		if g.qw < 1 || lx.familyWords[w] || lx.readGroup[w] {
			continue
		}
		content++
		per := map[int32]int{}
		for _, p := range ix.post[w] {
			if k := ix.famOf[p.doc]; k >= 0 {
				per[k]++
			}
		}
		wide := -1
		for k, n := range per {
			fi := &ix.fams[k]
			others := len(ix.post[w]) - n
			if len(fi.docs) >= ix.tn.minWideFamily && float64(n) >= ix.tn.familyWide*float64(len(fi.docs)) &&
				float64(others) <= ix.tn.familyElsewhere*float64(len(ix.docs)-len(fi.docs)) {
				wide = int(k)
			}
		}
		if wide < 0 || fam >= 0 && wide != fam {
			return -1
		}
		fam = wide
	}
	if content < ix.tn.minWideWords {
		return -1
	}
	return fam
}

// familyHits returns the tools of family k that keep accepts, the ones
// the ranking scored first (by score), then the others by name.
func (ix *Index) familyHits(k int, scored []Hit, keep func(*tools.Tool) bool) []Hit {
	var out []Hit
	in := map[*tools.Tool]bool{}
	for _, h := range scored {
		if ix.famOf[ix.byName[h.Tool.Name]] == int32(k) {
			out = append(out, h)
			in[h.Tool] = true
		}
	}
	var rest []Hit
	for _, d := range ix.fams[k].docs {
		t := ix.docs[d].tool
		if !in[t] && (keep == nil || keep(t)) {
			rest = append(rest, Hit{Tool: t})
		}
	}
	sortHits(rest)
	return append(out, rest...)
}
