package search

import (
	"slices"
	"strings"
)

// queryTerms returns the terms of a query (its literals stripped), in
// order, and the weight of each: 1 for the words of a sentence that asks
// — a question, an imperative, a sentence with "please", "can you", "I
// need" — and less for the words that tell the context around it: a
// sentence that states the situation, when another one asks, and a
// clause that carries the text to write or the reason ("saying …",
// "because …", "so that …"). A user's request mixes what to do with
// what they know; the tool is named by the first.
func (lx *Lexicon) queryTerms(q string, tn *tuning) ([]string, map[string]float64) {
	sents := sentences(q)
	if len(sents) == 1 && !lx.hasArgClause(sents[0]) {
		return lx.terms(q), nil
	}
	asks := false
	for _, s := range sents {
		if !lx.isContext(s) {
			asks = true
		}
	}
	var terms []string
	qw := map[string]float64{}
	add := func(text string, w float64) {
		for _, t := range lx.terms(text) {
			if x, ok := qw[t]; !ok || w > x {
				qw[t] = w
			}
			terms = append(terms, t)
		}
	}
	for _, s := range sents {
		w := 1.0
		if asks && lx.isContext(s) {
			w = tn.contextWeight
		}
		head, tail := lx.splitArgClause(s)
		add(head, w)
		add(tail, min(w, tn.argWeight))
	}
	return terms, qw
}

// isContext reports whether a sentence states the situation: it does not
// ask (no question mark, no "please", "can you", "I need"…) and it
// starts with a subject (I, we, my, the, this…), not a verb.
func (lx *Lexicon) isContext(s string) bool {
	if strings.HasSuffix(s, "?") {
		return false
	}
	ws := lowerWords(s)
	if len(ws) == 0 {
		return false
	}
	for i, w := range ws {
		if lx.asking[w] || i+1 < len(ws) && lx.asking[w+"+"+ws[i+1]] {
			return false
		}
	}
	return lx.subjects[strings.ReplaceAll(ws[0], "’", "'")]
}

func (lx *Lexicon) hasArgClause(s string) bool { _, tail := lx.splitArgClause(s); return tail != "" }

// splitArgClause cuts s before the first word of argClause, or after a
// colon that opens a list ("… in Asana: book venue, send invites").
func (lx *Lexicon) splitArgClause(s string) (head, tail string) {
	if i := strings.Index(s, ": "); i > 0 && strings.Contains(s[i:], ", ") && len(wordSpans(s[:i])) >= 3 {
		s, tail = s[:i], s[i+1:]
		if h, t := lx.splitArgClause(s); t != "" {
			return h, t + tail
		}
		return s, tail
	}
	ws := lowerWords(s)
	for i, w := range ws {
		// "so" opens a reason, unless it leads to the request ("so
		// please make it the default"): a soft reason.
		// "that" after a comment, note or message opens what it says
		// ("leave a note on ENG-7 that QA passed").
		if lx.argClause[w] && !(lx.softReasons[w] && i+1 < len(ws) && lx.asking[ws[i+1]]) || lx.saidOpeners[w] && i > 1 && slices.ContainsFunc(ws[:i], func(x string) bool { return lx.saidThings[x] }) {
			if j := wordSpans(s)[i][0]; j > 0 {
				return s[:j], s[j:]
			}
		}
	}
	return s, ""
}

// gerundOnly returns the verbs that text says only in their -ing form or
// in the past ("the pipeline that is running", "I already called the
// plumber"), as a noun ("the CSV export", "my list") or after a negation
// ("don't delete it"): a state, what happened or what not to do — not the
// action asked for.
func (lx *Lexicon) gerundOnly(text string) map[string]bool {
	var ing, other map[string]bool
	np := -1     // words since a determiner, in its noun phrase; -1 outside one
	neg := false // after a negation, until the clause ends
	prevEnd := 0
	spans := wordSpans(text)
	for k, sp := range spans {
		if strings.ContainsAny(text[prevEnd:sp[0]], ",;:.!?()—\"") {
			np, neg = -1, false
		}
		prevEnd = sp[1]
		w := strings.ToLower(text[sp[0]:sp[1]])
		if lx.npOpeners[w] {
			np = 0
			continue
		}
		// A verb after a negation is what not to do: "don't want to file
		// a duplicate", "without closing it".
		if lx.negations[w] {
			neg = true
			continue
		}
		if lx.prepositions[w] || lx.clauseWords[w] {
			np = -1
		}
		t, irr := irregular[w]
		if !irr {
			t = stem(w)
		}
		if !lx.verbs[t] {
			if np >= 0 {
				np++
			}
			continue
		}
		past := strings.HasSuffix(w, "ed") || irr && !strings.HasSuffix(w, "ing")
		// A verb's word in a noun phrase — after a determiner and any
		// modifiers — is a noun: "my list", "the broken CSV export".
		noun := np >= 0 && !strings.HasSuffix(w, "s") && !lx.loneVerbs[t] // not "the page looks"; "a new branch" asks for one
		// A verb before a record of what happened is its modifier: "change
		// history", "update log", "deploy log".
		if k+1 < len(spans) && lx.records[strings.ToLower(text[spans[k+1][0]:spans[k+1][1]])] && !strings.ContainsAny(text[sp[1]:spans[k+1][0]], ",;:.!?()—\"") {
			noun = true
		}
		np = -1
		if strings.HasSuffix(w, "ing") || past || noun || neg {
			if ing == nil {
				ing = map[string]bool{}
			}
			ing[t] = true
		} else {
			if other == nil {
				other = map[string]bool{}
			}
			other[t] = true
		}
	}
	for t := range ing {
		if other[t] {
			delete(ing, t)
		}
	}
	return ing
}

// pronounObject reports whether q's verb acts on a pronoun ("nuke it",
// "tick them off").
func (lx *Lexicon) pronounObject(q string) bool {
	ws := lowerWords(q)
	for i := 0; i+1 < len(ws); i++ {
		if t, _ := lx.wordTerm(ws[i]); (lx.verbs[t] || lx.offVerbs[ws[i]]) && lx.pronouns[ws[i+1]] {
			return true
		}
	}
	return false
}

// isQuestion reports whether a query asks rather than tells.
func (lx *Lexicon) isQuestion(q string) bool {
	q = strings.TrimSpace(q)
	if strings.HasSuffix(q, "?") {
		return true
	}
	f := strings.Fields(strings.ToLower(q))
	if len(f) == 0 {
		return false
	}
	l := " " + strings.ToLower(q) + " "
	for _, p := range lx.indirectQuestions {
		if strings.Contains(l, p) {
			return true
		}
	}
	return lx.questionOpeners[strings.Trim(f[0], ",.!?'")]
}
