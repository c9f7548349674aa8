package search

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Concepts and rephrasings (words/concepts.txt, words/rephrasings.txt):
// what a request implies in everyday words but says in none that tools
// use ("who changed the due date?" asks for a history), and everyday
// phrasings turned into the words tools say ("give the customer $45
// back" is a refund).

// concept is what a request implies: its terms (any of which a tool may
// say; the first names it) and the ways to say it.
type concept struct {
	terms    []string
	when     [][]cond // each a way to say it: all its conditions hold
	examples []string
}

// cond is one condition of a way to say a concept (see concepts.txt).
type cond struct {
	kind    string // says, !says, contains, !contains, starts, regex, query-contains, query-regex, kind, cue
	phrases []string
	re      *regexp.Regexp
	arg     string // a literal's kind, or a cue's name
}

// rephrasing turns a phrasing into the words tools say.
type rephrasing struct {
	repl     string
	anchors  []string // tried only on a request (lower case) with one of these
	re       *regexp.Regexp
	speaker  bool // not when its first group starts with the speaker
	examples []string
}

// cue is a request as concepts read it: lower-cased and as words, as
// written, and its literals' kinds.
type cue struct {
	lower, query string
	words, kinds []string
}

// any reports whether the request says one of phrases, each beginning a
// word ("ping" is not in "shipping"; "earlier version" is in "earlier
// versions").
func (c *cue) any(phrases ...string) bool {
	for _, p := range phrases {
		for i := 0; ; {
			j := strings.Index(c.lower[i:], p)
			if j < 0 {
				break
			}
			if r, _ := utf8.DecodeLastRuneInString(c.lower[:i+j]); i+j == 0 || !isWordRune(r) {
				return true
			}
			i += j + 1
		}
	}
	return false
}

// says reports whether the request says one way of k.
func (lx *Lexicon) says(k *concept, c *cue) bool {
	for _, way := range k.when {
		ok := true
		for i := range way {
			if !lx.holds(&way[i], c) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// holds reports whether condition d holds of the request c.
func (lx *Lexicon) holds(d *cond, c *cue) bool {
	switch d.kind {
	case "says":
		return c.any(d.phrases...)
	case "!says":
		return !c.any(d.phrases...)
	case "contains":
		return containsAny(c.lower, d.phrases...)
	case "!contains":
		return !containsAny(c.lower, d.phrases...)
	case "starts":
		return slices.ContainsFunc(d.phrases, func(p string) bool { return strings.HasPrefix(c.lower, p) })
	case "regex":
		return d.re.MatchString(c.lower)
	case "query-contains":
		return containsAny(c.query, d.phrases...)
	case "query-regex":
		return d.re.MatchString(c.query)
	case "kind":
		return slices.Contains(c.kinds, d.arg)
	case "cue":
		if d.arg == "who-did" {
			return lx.asksWhoDid(c.words)
		}
		return lx.namesLanguage(c.query)
	}
	return false
}

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// readConcept reads a line of [concepts]: concept:, when: or example:.
func (lx *Lexicon) readConcept(text string) error {
	key, val, _ := strings.Cut(text, ":")
	val = strings.TrimSpace(val)
	var k *concept
	if n := len(lx.concepts); n > 0 && lx.open {
		k = &lx.concepts[n-1]
	}
	switch key {
	case "concept":
		ts := lx.terms(val)
		if len(ts) == 0 {
			return fmt.Errorf("a concept needs words a tool may say")
		}
		lx.concepts = append(lx.concepts, concept{terms: ts})
		lx.open = true
		return nil
	case "when", "example":
		if k == nil {
			return fmt.Errorf("%s: before any concept: line", key)
		}
	default:
		return fmt.Errorf("want concept:, when: or example:")
	}
	if key == "example" {
		k.examples = append(k.examples, val)
		return nil
	}
	var way []cond
	for _, part := range strings.Split(val, " && ") {
		kind, arg, _ := strings.Cut(strings.TrimSpace(part), " ")
		arg = strings.TrimSpace(arg)
		d := cond{kind: kind}
		switch kind {
		case "says", "!says", "contains", "!contains", "starts", "query-contains":
			ps, err := phraseList(arg)
			if err != nil {
				return err
			}
			d.phrases = ps
		case "regex", "query-regex":
			re, err := regexp.Compile(arg)
			if err != nil {
				return fmt.Errorf("%s: %v", kind, err)
			}
			d.re = re
		case "kind":
			if !literalKinds[arg] {
				return fmt.Errorf("kind %s: no such kind of literal (url, file, phone, reference)", arg)
			}
			d.arg = arg
		case "cue":
			if arg != "who-did" && arg != "language" {
				return fmt.Errorf("cue %s: no such cue (who-did, language)", arg)
			}
			d.arg = arg
		default:
			return fmt.Errorf("%q: no such condition (says, !says, contains, !contains, starts, regex, query-contains, query-regex, kind, cue)", kind)
		}
		way = append(way, d)
	}
	k.when = append(k.when, way)
	return nil
}

// readRephrasing reads a line of [rephrasings]: rephrasing:, has:,
// match:, unless-speaker or example:.
func (lx *Lexicon) readRephrasing(text string) error {
	key, val, _ := strings.Cut(text, ":")
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	if key == "rephrasing" {
		if strings.HasPrefix(val, `"`) {
			u, err := strconv.Unquote(val)
			if err != nil {
				return fmt.Errorf("bad quoted text %s", val)
			}
			val = u
		}
		lx.rephrasings = append(lx.rephrasings, rephrasing{repl: val})
		lx.open = true
		return nil
	}
	if !lx.open {
		return fmt.Errorf("%s: before any rephrasing: line", key)
	}
	r := &lx.rephrasings[len(lx.rephrasings)-1]
	switch key {
	case "has":
		ps, err := phraseList(val)
		if err != nil {
			return err
		}
		r.anchors = append(r.anchors, ps...)
	case "match":
		re, err := regexp.Compile(val)
		if err != nil {
			return fmt.Errorf("match: %v", err)
		}
		r.re = re
	case "unless-speaker":
		r.speaker = true
	case "example":
		r.examples = append(r.examples, val)
	default:
		return fmt.Errorf("want rephrasing:, has:, match:, unless-speaker or example:")
	}
	return nil
}

// rephrase applies the rephrasings to a query.
func (lx *Lexicon) rephrase(q string) string {
	lower := strings.ToLower(q)
	for i := range lx.rephrasings {
		r := &lx.rephrasings[i]
		if len(r.anchors) > 0 && !containsAny(lower, r.anchors...) {
			continue
		}
		re := r.re
		q = re.ReplaceAllStringFunc(q, func(m string) string {
			if sub := re.FindStringSubmatch(m); r.speaker && len(sub) > 1 {
				if f := strings.Fields(strings.ToLower(sub[1])); len(f) > 0 && lx.speaker[f[0]] {
					return m
				}
			}
			return re.ReplaceAllString(m, r.repl)
		})
	}
	return q
}

// asksWhoDid reports whether words ask who did something: a word of
// who-did and a verb in the past within three words ("who changed", "who
// last touched", "who wrote").
func (lx *Lexicon) asksWhoDid(ws []string) bool {
	for i, w := range ws {
		if !lx.whoDid[w] {
			continue
		}
		for j := i + 1; j < len(ws) && j <= i+3; j++ {
			if x := ws[j]; strings.HasSuffix(x, "ed") && len(x) > 4 || lx.pastTense[x] {
				return true
			}
		}
	}
	return false
}

// namesLanguage reports whether query names a language (as written) after
// a word of into-words ("put this into French").
func (lx *Lexicon) namesLanguage(query string) bool {
	ws := strings.FieldsFunc(query, func(r rune) bool { return !isWordRune(r) })
	for i, w := range ws {
		if lx.languages[w] && i > 0 && lx.intoWords[strings.ToLower(ws[i-1])] {
			return true
		}
	}
	return false
}

// actsOnLiteral reports whether a verb of q acts on a literal: "clone
// https://…", "deploy ./dist". What it acts on is then the literal, which
// no tool names.
func (lx *Lexicon) actsOnLiteral(q string) bool {
	fs := strings.Fields(q)
	for i := 0; i+1 < len(fs); i++ {
		t, _ := lx.wordTerm(strings.ToLower(strings.Trim(fs[i], ".,;:!?()'\"")))
		if lx.verbs[t] && isLiteral(strings.TrimRight(fs[i+1], ".,;:!?)")) && lx.literalKind(fs[i+1]) != "" {
			return true
		}
	}
	return false
}
