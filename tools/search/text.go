package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terms returns the index terms of text, in order: words cut at
// non-alphanumerics, snake_case and camelCase, lower-cased, without stop
// words, with two-word verbs folded and abbreviations expanded, stemmed.
// (with the built-in word knowledge).
func Terms(text string) []string { return builtin().terms(text) }

// terms returns the index terms of text (see Terms).
func (lx *Lexicon) terms(text string) []string {
	var out []string
	ws := words(text)
	for i, w := range ws {
		ws[i] = strings.ToLower(w)
	}
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if lx.idiomWords[w] {
			if ts, n, ok := lx.idiom(ws, i); ok {
				out = append(out, ts...)
				i += n
				continue
			}
		}
		if t, exp := lx.wordTerm(w); exp != nil {
			out = append(out, exp...)
		} else if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// indexTerms returns the terms of a tool's text: its Terms, and the whole
// of each word written in camelCase ("PromQL" is prom, ql and promql), which
// a query may write in lower case.
func (lx *Lexicon) indexTerms(text string) []string {
	out := lx.terms(text)
	start, camel := -1, false
	for i, r := range text + " " {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start, camel = i, false
			} else {
				camel = camel || isUpper(r)
			}
			continue
		}
		if start >= 0 && camel {
			if w := text[start:i]; len(words(w)) > 1 {
				if t, _ := lx.wordTerm(strings.ToLower(w)); t != "" {
					out = append(out, t)
				}
			}
		}
		start = -1
	}
	return out
}

// wordTerm returns the index form of w, a lower-cased word: its expansion
// (pr → pull request) as exp, or its stem as t (wrote → write, repo →
// repository); nothing for a stop word or a single letter.
func (lx *Lexicon) wordTerm(w string) (t string, exp []string) {
	if lx.stop[w] {
		return "", nil
	}
	if exp, ok := lx.expand[w]; ok {
		return "", exp
	}
	if v, ok := irregular[w]; ok {
		w = v
	} else {
		w = stem(w)
	}
	if c, ok := lx.canon[w]; ok {
		w = c
	}
	if len(w) < 2 && !(len(w) == 1 && w[0] >= '0' && w[0] <= '9') {
		return "", nil
	}
	return w, nil
}

// words splits text at non-alphanumerics and camelCase boundaries
// (getHTTPStatus → get HTTP Status); digits stay with their letters (k8s,
// ec2, s3). The words are substrings of text.
func words(text string) []string {
	var out []string
	start := -1
	var prev rune
	for i, r := range text {
		if r < utf8.RuneSelf {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
				if start >= 0 {
					out = append(out, text[start:i])
					start = -1
				}
				continue
			}
		} else if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				out = append(out, text[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start, prev = i, r
			continue
		}
		if isUpper(r) {
			next, n := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
			if isLower(prev) || (isUpper(prev) && n > 0 && isLower(next) && !pluralAcronym(text[i+utf8.RuneLen(r):])) {
				out = append(out, text[start:i])
				start = i
			}
		}
		prev = r
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	return out
}

func isUpper(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.IsUpper(r)
}

func isLower(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.IsLower(r)
}

// pluralAcronym reports whether rest starts with the s of "PRs" or "VMs",
// which ends a word.
func pluralAcronym(rest string) bool {
	if rest == "" || rest[0] != 's' {
		return false
	}
	next, n := utf8.DecodeRuneInString(rest[1:])
	return n == 0 || !unicode.IsLetter(next)
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
	case strings.HasSuffix(w, "ied") && len(w) > 4:
		w = w[:len(w)-3] + "y"
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

// capitalized returns the terms of the words query writes capitalized
// other than at the start of a sentence ("in Plane", "the Memory server").
func (lx *Lexicon) capitalized(query string) map[string]bool {
	out := map[string]bool{}
	start := true
	for _, f := range strings.Fields(query) {
		w := strings.Trim(f, "\"'()[]{}.,;:!?")
		if r, _ := utf8.DecodeRuneInString(w); !start && isUpper(r) {
			for _, t := range lx.terms(w) {
				out[t] = true
			}
			out[stem(strings.ToLower(w))] = true
		}
		start = strings.ContainsAny(f[len(f)-1:], ".!?")
	}
	return out
}

// plainWord reports whether w is written as a word, not a name or a key:
// letters only, none capital after the first.
func plainWord(w string) bool {
	for i, r := range w {
		if !unicode.IsLetter(r) || i > 0 && isUpper(r) {
			return false
		}
	}
	return true
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
