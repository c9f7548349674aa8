package search

import (
	"slices"

	"github.com/sandcall/sandcall/tools"
)

// The checks: five signs that no tool answers a query, each of which once
// emptied an answer on its own and which the confidence stage now weighs
// (see confidence.go): a verb the catalog never says (opensUnknownVerb), a
// service it lacks (namesAbsentService), an action that meets no tool's
// object (missesObject), a floor none of the best tools reaches (fits), a
// query many tools fit about equally (cut).

// missesObject reports whether q asks for an action on something tools
// act on that no tool meets both in (see actionMeetsObject), among inFam,
// the tools of the families it names, if any. A question is not held to
// it (it reads), nor a query naming a tool, nor one whose verbs only read
// (what it searches may be an argument, "search the index for orders"),
// nor one whose verb acts on a literal ("clone https://…").
func (ix *Index) missesObject(q *query, inFam map[int32]bool, keep func(*tools.Tool) bool) bool {
	lx := ix.lx
	return q.qVerb && !q.question && q.exact < 0 && (!lx.readsOnly(q.groups, q.gerund) || len(inFam) > 0 && lx.listsOnly(q.groups)) &&
		!lx.actsOnLiteral(q.text) && !ix.actionMeetsObject(q.groups, q.action, inFam, keep, q.plain, q.concepts)
}

// fits reports whether one of the gate-window best-ranked tools fits q
// above its floor; then the ranking stands, whatever the confidence of
// each hit. (A floor on each hit dropped the right tool, ranked first,
// when a word of the request no tool says lowered its confidence, and
// kept a worse one that fit another word better.) A tool of the first
// three whose name says what the request implies (a translation for "put
// this into French") fits at a lower floor: the concept is the request's
// point, its other words context.
func (ix *Index) fits(q *query, all []Hit) bool {
	fits := false
	for k := 0; k < ix.tn.gateWindow && k < len(all); k++ {
		fits = fits || all[k].Confidence >= q.floor ||
			k < 3 && all[k].Confidence >= ix.tn.conceptFloor*q.floor && ix.namesConcept(int32(ix.byName[all[k].Tool.Name]), q.concepts)
	}
	return fits
}

// cut drops, in place, the hits scoring under min-relative of the best
// (a tool named exactly does not raise the floor of the rest), and
// reports whether the query is vague: many tools fit it about equally
// ("list", "get the names"), telling them apart no better than no query.
// A query naming a tool exactly is answered with that tool alone then.
func (ix *Index) cut(all []Hit) (out []Hit, vague bool) {
	best := all[0].Score
	if best >= 1e6 {
		best = 0 // the exact name does not raise the floor of the rest
		if len(all) > 1 {
			best = all[1].Score
		}
	}
	out = all[:0]
	close := 0
	for i, h := range all {
		if i == 0 || h.Score >= ix.tn.minRelative*best {
			out = append(out, h)
		}
		if h.Score >= ix.tn.vagueRatio*best && h.Score < 1e6 {
			close++
		}
	}
	if best > 0 && close > max(ix.tn.vagueMin, len(ix.docs)/25) {
		if all[0].Score < 1e6 {
			vague = true
		} else {
			out = out[:1]
		}
	}
	return out, vague
}

// actionMeetsObject reports whether some tool meets both the query's
// action (a verb it says, or a synonym) and one of its objects (a word it
// says in full weight that is neither a verb nor a family's name, or a
// synonym): the object as its name's last word or as a verb's object in its
// summary or description (see directTerms), the action in its name,
// summary, description or an argument's enum; among fam, the tools of the
// families the query names, if it names one (plain is the query as
// searched). The query's objects are the words after its verb when they
// name something tools name; when all are in prepositional phrases, a
// tool's phrases meet them. A query with no object that some tool's name
// has (of fam's, for a family of at most small-family tools) misses nothing
// — unless it names a family none of whose tools does the action. Only the
// tools keep accepts count: a tool the caller cannot call does not answer
// its request.
func (ix *Index) actionMeetsObject(groups []group, action map[string]bool, fam map[int32]bool, keep func(*tools.Tool) bool, plain string, implied map[string][]string) bool {
	lx := ix.lx
	var objs []group
	qObj := map[string]bool{}
	lx.directTerms(plain, qObj)
	inPP := false // the request's objects are all in prepositional phrases
	known := false
	// "Nuke it": the object is what an earlier sentence named.
	pro := lx.pronounObject(plain)
	for _, g := range groups {
		w := g.terms[0]
		if lx.verbs[w] || g.qw < 1 && !pro || ix.namesFamily(w) || lx.vagueObjects[w] {
			continue
		}
		objs = append(objs, g)
		for _, t := range g.terms {
			known = known || ix.named[t]
		}
	}
	// What the request acts on is its verb's object when one is known
	// ("delete the comment on the record": the comment).
	{
		var direct []group
		named := false
		for _, g := range objs {
			if qObj[g.terms[0]] {
				direct = append(direct, g)
				named = named || slices.ContainsFunc(g.terms, func(t string) bool { return ix.named[t] })
			}
		}
		if named && !pro {
			objs = direct
		} else if len(direct) == 0 {
			inPP = true
		}
		// What the request implies is also what it acts on ("a code
		// that takes 30% off" is a discount).
		for _, g := range groups {
			if implied[g.terms[0]] != nil && !slices.ContainsFunc(objs, func(o group) bool { return o.terms[0] == g.terms[0] }) {
				objs = append(objs, g)
			}
		}
	}
	// A family whose tools' names say no object (get, post, put: a
	// generic API) acts on what its arguments say, like a small one.
	generic := fam != nil
	for d := range fam {
		generic = generic && ix.docs[d].head == ""
	}
	if fam != nil && (len(fam) <= ix.tn.smallFamily || generic) {
		// A small family does one thing: an object that none of its
		// tools names is an argument ("run a SELECT on Postgres").
		known = false
		for _, g := range objs {
			for _, t := range g.terms {
				for _, p := range ix.post[t] {
					if p.tf[fName] > 0 && fam[p.doc] {
						known = true
					}
				}
			}
		}
	}
	// says reports whether a posting's tool has its word in its name,
	// summary or description.
	says := func(p posting) bool { return p.tf[fName] > 0 || p.tf[fSummary] > 0 || p.tf[fDesc] > 0 }
	// candidate reports whether a tool may answer: of the named families,
	// if any, and one the caller may call.
	candidate := func(d int32) bool { return (fam == nil || fam[d]) && (keep == nil || keep(ix.docs[d].tool)) }
	acting := map[int32]bool{}
	for w := range action {
		for _, p := range ix.post[w] {
			if says(p) {
				acting[p.doc] = true
			}
		}
		// A tool of several operations says them in an argument's enum
		// ("action": "create", "update", "vote").
		for _, d := range ix.ops[w] {
			acting[d] = true
		}
	}
	// A tool named after what one writes, with no verb (issues_comment),
	// writes it.
	if action[lx.createVerb] {
		for _, d := range ix.writers {
			acting[d] = true
		}
	}
	if !known {
		if fam != nil {
			// Asked of a family, the action must be one of its tools'
			// ("share my Google Calendar").
			for d := range fam {
				if acting[d] && candidate(d) {
					return true
				}
			}
			return false
		}
		return true
	}
	for _, g := range objs {
		for _, w := range g.terms {
			for _, p := range ix.post[w] {
				if says(p) && acting[p.doc] && candidate(p.doc) {
					// What a tool acts on is the last word of its name
					// (delete_issue_type deletes types), or what its
					// description says outside a prepositional phrase
					// ("Delete records from a table" deletes no table).
					d := &ix.docs[p.doc]
					if !(p.tf[fName] > 0 && (d.head == w || d.head == "")) && (p.tf[fSummary] == 0 && p.tf[fDesc] == 0 || !inPP && slices.Contains(d.ctx, w)) {
						continue
					}
					return true
				}
			}
		}
	}
	// headed reports whether a candidate tool's name acts on w, and
	// updates it if update is set.
	headed := func(w string, update bool) bool {
		for _, p := range ix.post[w] {
			if d := &ix.docs[p.doc]; d.head == w && (!update || slices.Contains(d.verb, lx.updateVerb)) && candidate(p.doc) {
				return true
			}
		}
		return false
	}
	// A verb that names what a tool makes is met by that tool: "refund
	// $25 of it" by create_refund, "invoice Acme" by create_invoice.
	adds := false
	for _, g := range groups {
		w := g.terms[0]
		if lx.verbs[w] && g.qw >= 1 && headed(w, false) {
			return true
		}
		adds = adds || lx.partVerbs[w] && g.qw >= 1
	}
	// Adding a part to a thing updates the thing: "add a panel to the
	// dashboard" is update_dashboard, in a catalog without add_panel.
	if adds {
		for _, g := range groups {
			w := g.terms[0]
			if !lx.verbs[w] && g.qw >= 1 && !ix.namesFamily(w) && !qObj[w] && headed(w, true) {
				return true
			}
		}
	}
	return false
}

// listsOnly reports whether a request's only verb is list: a listing of
// a family's things, which only a tool that lists them answers ("list
// auth0 users" beside auth0_list_logs).
func (lx *Lexicon) listsOnly(groups []group) bool {
	n := 0
	for _, g := range groups {
		if lx.verbs[g.terms[0]] && g.qw >= 1 {
			if g.terms[0] != lx.listVerb {
				return false
			}
			n++
		}
	}
	return n > 0
}

// readsOnly reports whether every verb of the query reads (get, list,
// search, …).
func (lx *Lexicon) readsOnly(groups []group, gerund map[string]bool) bool {
	for _, g := range groups {
		w := g.terms[0]
		if lx.verbs[w] && !gerund[w] && !lx.readGroup[w] {
			return false
		}
	}
	return true
}

// opensUnknownVerb reports whether a sentence of plain that asks opens
// with an English word (one WordNet relates to others) that neither the
// catalog nor any of its synonyms or related words is in, before a
// determiner, a number or a word the catalog has: an imperative of an
// action no tool does.
func (ix *Index) opensUnknownVerb(plain string) bool {
	lx := ix.lx
	for _, s := range sentences(plain) {
		spans := wordSpans(s)
		if len(spans) < 2 || !plainWord(s[spans[0][0]:spans[0][1]]) {
			continue // a name or a key (MOB-1502, QA), not a verb
		}
		ws := lowerWords(s)
		t, exp := lx.wordTerm(ws[0])
		if t == "" || exp != nil || lx.verbs[t] || len(ix.post[t]) > 0 || len(lx.synonyms[t]) > 0 || slices.ContainsFunc(lx.oneWay[t], func(r string) bool { return len(ix.post[r]) > 0 }) || lx.changes[t] || lx.idiomWords[ws[0]] || len(ix.typos(t)) > 0 {
			continue
		}
		rel, arg := related(t)
		if len(rel) == 0 || arg || slices.ContainsFunc(rel, func(r string) bool { return len(ix.post[r]) > 0 }) {
			continue
		}
		next := ws[1]
		nt, _ := lx.wordTerm(next)
		if lx.npOpeners[next] || next[0] >= '0' && next[0] <= '9' || nt != "" && len(ix.post[nt]) > 0 && !lx.verbs[nt] {
			return true
		}
	}
	return false
}

// namesConcept reports whether the name of tool i says one of the
// concepts a query implies (each its first term and its others).
func (ix *Index) namesConcept(i int32, concepts map[string][]string) bool {
	for _, w := range ix.docs[i].name {
		for c, alts := range concepts {
			if w == c || slices.Contains(alts, w) {
				return true
			}
		}
	}
	return false
}
