package search

import (
	"fmt"
	"strings"
)

// Services (words/services.txt): the names of well-known online services
// and apps. A request that names one where it asks, that the catalog
// never mentions, with none of the catalog's families, asks for a tool of
// a service the catalog lacks ("create a Jira ticket" beside Linear).

// readServices reads a line of [services]: names:, common: or suite
// WORD:.
func (lx *Lexicon) readServices(text string) error {
	key, val, ok := strings.Cut(text, ":")
	if !ok {
		return fmt.Errorf("want names:, common: or suite WORD: and names")
	}
	names := strings.Fields(strings.ToLower(val))
	switch f := strings.Fields(key); {
	case len(f) == 1 && f[0] == "names":
		for _, n := range names {
			lx.services[n] = true
		}
	case len(f) == 1 && f[0] == "common":
		for _, n := range names {
			lx.commonServices[n] = true
		}
	case len(f) == 2 && f[0] == "suite":
		w := strings.ToLower(f[1])
		if lx.suites[w] == nil {
			lx.suites[w] = map[string]bool{}
			lx.suiteWords = append(lx.suiteWords, w)
		}
		for _, n := range names {
			lx.suites[w][n] = true
		}
	default:
		return fmt.Errorf("want names:, common: or suite WORD: and names")
	}
	return nil
}

// namesAbsentService reports whether plain (a query without its quoted
// names) names, where it asks, a well-known service (see services) that
// the index never mentions. It asks in its only sentence, or in one that
// is a question, asks ("please", "can you") or opens with a verb — not in
// one that tells ("Customers are complaining on Twitter") — and not in a
// reason or the text to write (see splitArgClause); "a PagerDuty one" is
// one of something else. Going to a service's site is a browser's work:
// "go to YouTube and search for …" asks for no YouTube tool.
func (ix *Index) namesAbsentService(query, plain string) bool {
	lx := ix.lx
	var caps map[string]bool
	sents := sentences(plain)
	found := false
sents:
	for _, s := range sents {
		if len(sents) > 1 && !lx.asks(s) {
			continue
		}
		head, _ := lx.splitArgClause(s)
		ws := lowerWords(head)
		for i, w := range ws {
			w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
			// A suite's products are services by their second word
			// ("google calendar" beside a catalog that has no calendar).
			if prods := lx.suites[w]; prods != nil && i+1 < len(ws) && prods[ws[i+1]] {
				w = ws[i+1]
				if t, _ := lx.wordTerm(w); len(ix.post[t]) == 0 {
					found = true
					break sents
				}
				continue
			}
			// "a PagerDuty one" is one of something else; "our Zapier
			// hook", "the Stripe gateway" are a part of this system's.
			if !lx.services[w] || i+1 < len(ws) && lx.serviceParts[ws[i+1]] {
				continue
			}
			// The index has the word in its term form (supabase → supabas).
			if t, _ := lx.wordTerm(w); len(ix.post[t]) > 0 {
				continue
			}
			if lx.commonServices[w] {
				if caps == nil {
					caps = lx.capitalized(query)
				}
				// A model's short query writes all in lower case: a
				// service first, or after to, in, on ("slack post
				// message", "post message to slack channel").
				typed := len(sents) == 1 && len(ws) <= 8 && strings.ToLower(query) == query && (i == 0 || lx.serviceOpeners[ws[i-1]])
				if !caps[stem(w)] && !caps[w] && !typed {
					continue
				}
			}
			found = true
			break sents
		}
	}
	if !found {
		return false
	}
	for _, t := range lx.terms(plain) {
		if lx.browseVerbs[t] {
			return false
		}
	}
	return true
}

// asks reports whether a sentence asks: a question, a request ("please",
// "can you"), or an imperative (its first word a verb's).
func (lx *Lexicon) asks(s string) bool {
	if strings.HasSuffix(s, "?") {
		return true
	}
	ws := lowerWords(s)
	for i, w := range ws {
		if lx.asking[w] || i+1 < len(ws) && lx.asking[w+"+"+ws[i+1]] {
			return true
		}
	}
	if len(ws) == 0 {
		return false
	}
	t, _ := lx.wordTerm(ws[0])
	return lx.verbs[t] || lx.idiomWords[ws[0]]
}
