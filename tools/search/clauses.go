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
func queryTerms(q string) ([]string, map[string]float64) {
	sents := sentences(q)
	if len(sents) == 1 && !hasArgClause(sents[0]) {
		return Terms(q), nil
	}
	asks := false
	for _, s := range sents {
		if !isContext(s) {
			asks = true
		}
	}
	var terms []string
	qw := map[string]float64{}
	add := func(text string, w float64) {
		for _, t := range Terms(text) {
			if x, ok := qw[t]; !ok || w > x {
				qw[t] = w
			}
			terms = append(terms, t)
		}
	}
	for _, s := range sents {
		w := 1.0
		if asks && isContext(s) {
			w = contextWeight
		}
		head, tail := splitArgClause(s)
		add(head, w)
		add(tail, min(w, argWeight))
	}
	return terms, qw
}

// asking are the words and pairs that make a sentence a request.
var asking = toSet(`please can+you could+you would+you will+you i+need i+want i'd+like id+like i+would help+me let's lets need+to
want+to show+me tell+me give+me find+me get+me`)

// subjects start a sentence that states something rather than asks.
var subjects = toSet(`i i'm im i've ive i'll we we're we've our my the this that these those someone somebody it it's its
there there's they they're he she his her our yesterday today`)

// isContext reports whether a sentence states the situation: it does not
// ask (no question mark, no "please", "can you", "I need"…) and it
// starts with a subject (I, we, my, the, this…), not a verb.
func isContext(s string) bool {
	if strings.HasSuffix(s, "?") {
		return false
	}
	ws := lowerWords(s)
	if len(ws) == 0 {
		return false
	}
	for i, w := range ws {
		if asking[w] || i+1 < len(ws) && asking[w+"+"+ws[i+1]] {
			return false
		}
	}
	return subjects[strings.ReplaceAll(ws[0], "’", "'")]
}

// argClause are the words that open a clause carrying the text to write
// or the reason, not the action: "… saying the fix is deployed", "…
// because it broke the build", "… so that we can both edit it", "… so
// GitHub can post there" (not "… so please make it the default").
var argClause = toSet(`saying says stating because so before`)

// saidThings are what one writes to say something: a "that" after one
// opens what it says.
var saidThings = toSet(`comment comments note notes message messages reply`)

func hasArgClause(s string) bool { _, tail := splitArgClause(s); return tail != "" }

// splitArgClause cuts s before the first word of argClause, or after a
// colon that opens a list ("… in Asana: book venue, send invites").
func splitArgClause(s string) (head, tail string) {
	if i := strings.Index(s, ": "); i > 0 && strings.Contains(s[i:], ", ") && len(wordSpans(s[:i])) >= 3 {
		s, tail = s[:i], s[i+1:]
		if h, t := splitArgClause(s); t != "" {
			return h, t + tail
		}
		return s, tail
	}
	ws := lowerWords(s)
	for i, w := range ws {
		// "so" opens a reason, unless it leads to the request ("so
		// please make it the default").
		// "that" after a comment, note or message opens what it says
		// ("leave a note on ENG-7 that QA passed").
		if argClause[w] && !(w == "so" && i+1 < len(ws) && asking[ws[i+1]]) || w == "that" && i > 1 && slices.ContainsFunc(ws[:i], func(x string) bool { return saidThings[x] }) {
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
func gerundOnly(text string) map[string]bool {
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
		if npOpeners[w] {
			np = 0
			continue
		}
		// A verb after a negation is what not to do: "don't want to file
		// a duplicate", "without closing it".
		if negations[w] {
			neg = true
			continue
		}
		if prepositions[w] || clauseWords[w] {
			np = -1
		}
		t, irr := irregular[w]
		if !irr {
			t = stem(w)
		}
		if !verbs[t] {
			if np >= 0 {
				np++
			}
			continue
		}
		past := strings.HasSuffix(w, "ed") || irr && !strings.HasSuffix(w, "ing")
		// A verb's word in a noun phrase — after a determiner and any
		// modifiers — is a noun: "my list", "the broken CSV export".
		noun := np >= 0 && !strings.HasSuffix(w, "s") && t != "new" // not "the page looks"; "a new branch" asks for one
		// A verb before a record of what happened is its modifier: "change
		// history", "update log", "deploy log".
		if k+1 < len(spans) && records[strings.ToLower(text[spans[k+1][0]:spans[k+1][1]])] && !strings.ContainsAny(text[sp[1]:spans[k+1][0]], ",;:.!?()—\"") {
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
func pronounObject(q string) bool {
	ws := lowerWords(q)
	for i := 0; i+1 < len(ws); i++ {
		if t, _ := wordTerm(ws[i]); (verbs[t] || offVerbs[ws[i]]) && pronouns[ws[i+1]] {
			return true
		}
	}
	return false
}

// asksWho reports whether q asks who: "who's on …", "who else has access".
func asksWho(q string) bool {
	for _, w := range lowerWords(q) {
		switch strings.ReplaceAll(w, "’", "'") {
		case "who", "who's", "whom", "whos":
			return true
		}
	}
	return false
}

// isQuestion reports whether a query asks rather than tells.
func isQuestion(q string) bool {
	q = strings.TrimSpace(q)
	if strings.HasSuffix(q, "?") {
		return true
	}
	f := strings.Fields(strings.ToLower(q))
	if len(f) == 0 {
		return false
	}
	l := " " + strings.ToLower(q) + " "
	for _, p := range indirectQuestions {
		if strings.Contains(l, p) {
			return true
		}
	}
	switch strings.Trim(f[0], ",.!?'") {
	case "what", "what's", "whats", "which", "who", "whose", "when", "where", "why", "how", "is", "are", "does", "do", "did", "was", "were", "can", "has", "have":
		return true
	}
	return false
}
