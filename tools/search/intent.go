package search

import (
	"slices"
	"strings"
	"unicode"
)

// The weights of a request's words by the part of the request they are in
// (see queryTerms).
const (
	// contextWeight is the weight of a sentence that only tells the
	// situation ("My laptop fan is going crazy.") in a request that also
	// asks something.
	contextWeight = 0.5
	// argWeight is the weight of a clause that says what to write or why
	// ("… saying the fix is deployed", "… so I can experiment").
	argWeight = 0.4
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

// sentences cuts text after '.', '?', '!' or ';' followed by a space,
// and at line breaks and dashes between words. A sentence keeps its
// final mark.
func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		end := -1
		switch {
		case c == '\n':
			end = i
		case (c == '.' || c == '?' || c == '!' || c == ';') && (i+1 == len(text) || text[i+1] == ' '):
			end = i + 1
		case strings.HasPrefix(text[i:], " — ") || strings.HasPrefix(text[i:], " - "):
			end = i
		}
		if end < 0 {
			continue
		}
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
		if start < i+1 {
			start = i + 1
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	if len(out) == 0 {
		out = []string{text}
	}
	return out
}

// wordSpans returns the byte spans of the words of s: letters, digits
// and apostrophes ("i'm", "what's").
func wordSpans(s string) [][2]int {
	var out [][2]int
	start := -1
	for i, r := range s {
		in := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’'
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(s)})
	}
	return out
}

// lowerWords are the words of s, lower-cased.
func lowerWords(s string) []string {
	spans := wordSpans(s)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = strings.ToLower(s[sp[0]:sp[1]])
	}
	return out
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
