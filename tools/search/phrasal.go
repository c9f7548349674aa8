package search

import (
	"fmt"
	"strconv"
	"strings"
)

// Phrasal verbs and idioms (words/phrasal.txt): a pattern of words read as
// the words it means, in tools' text and requests alike ("set up" is
// create, "log a bug" creates one, "tick it off" completes it).

// phrasal is one rule: its slots, each one word, and what it means.
type phrasal struct {
	slots []slot
	// out is what the words mean: terms, and $n for the n-th word's term.
	out []string
	// taken is how many of the slots it takes (the rest look ahead).
	taken int
}

// slot is one word of a pattern.
type slot struct {
	words  []string // one of these words
	prefix string   // a word beginning so
	set    string   // a word of this set
	any    bool     // any word
	// look: 0, the slot is taken; 1, it must be there but is read again
	// as a word; -1, it must not be there (or nothing follows).
	look int
}

// readPhrasal reads a line of [phrasal]: PATTERN => WORDS.
func (lx *Lexicon) readPhrasal(text string) error {
	pat, means, ok := strings.Cut(text, "=>")
	if !ok || len(strings.Fields(pat)) == 0 || len(strings.Fields(means)) == 0 {
		return fmt.Errorf("want pattern => what it means")
	}
	r := &phrasal{}
	for _, f := range strings.Fields(pat) {
		var s slot
		switch {
		case strings.HasPrefix(f, "+"):
			s.look, f = 1, f[1:]
		case strings.HasPrefix(f, "-"):
			s.look, f = -1, f[1:]
		}
		switch {
		case f == "*":
			s.any = true
		case strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]"):
			s.set = f[1 : len(f)-1]
			if lx.sets[s.set] == nil || lx.sets[s.set].terms {
				return fmt.Errorf("%s: no set of words so named", f)
			}
		case strings.HasSuffix(f, "*") && !strings.Contains(f, "|"):
			s.prefix = strings.ToLower(f[:len(f)-1])
		default:
			s.words = strings.Split(strings.ToLower(f), "|")
		}
		if s.look == 0 {
			if len(r.slots) > r.taken {
				return fmt.Errorf("%s: a slot taken after one that looks ahead", f)
			}
			r.taken++
		}
		r.slots = append(r.slots, s)
	}
	if r.taken == 0 || r.slots[0].look != 0 || r.slots[0].any || r.slots[0].prefix != "" {
		return fmt.Errorf("a pattern begins with a word, words or a set")
	}
	for _, m := range strings.Fields(means) {
		if n, ok := strings.CutPrefix(m, "$"); ok {
			if k, err := strconv.Atoi(n); err != nil || k < 1 || k > r.taken {
				return fmt.Errorf("%s: no such word of the pattern", m)
			}
			r.out = append(r.out, m)
			continue
		}
		r.out = append(r.out, lx.norm(m))
	}
	lx.ruleList = append(lx.ruleList, r)
	for _, w := range r.first(lx) {
		lx.rules[w] = append(lx.rules[w], r)
	}
	return nil
}

// first returns the words that begin r.
func (r *phrasal) first(lx *Lexicon) []string {
	if s := r.slots[0]; s.set != "" {
		return lx.sets[s.set].words
	}
	return r.slots[0].words
}

// pair reports whether r is a two-word verb: two plain words, taken, that
// mean one term.
func (r *phrasal) pair() (a, b string, ok bool) {
	if len(r.slots) != 2 || r.taken != 2 || len(r.out) != 1 || strings.HasPrefix(r.out[0], "$") {
		return "", "", false
	}
	for _, s := range r.slots {
		if len(s.words) != 1 {
			return "", "", false
		}
	}
	return r.slots[0].words[0], r.slots[1].words[0], true
}

// fits reports whether word w fits s.
func (s *slot) fits(lx *Lexicon, w string) bool {
	switch {
	case s.any:
		return true
	case s.set != "":
		return lx.sets[s.set].has[w]
	case s.prefix != "":
		return strings.HasPrefix(w, s.prefix)
	}
	for _, x := range s.words {
		if x == w {
			return true
		}
	}
	return false
}

// match reads r at ws[i] (lower-case words): its terms and how many more
// words it takes.
func (r *phrasal) match(lx *Lexicon, ws []string, i int) (terms []string, n int, ok bool) {
	for k := range r.slots {
		s := &r.slots[k]
		at := i + k
		if s.look < 0 {
			if at < len(ws) && s.fits(lx, ws[at]) {
				return nil, 0, false
			}
			continue
		}
		if at >= len(ws) || !s.fits(lx, ws[at]) {
			return nil, 0, false
		}
	}
	for _, o := range r.out {
		if k, ok := strings.CutPrefix(o, "$"); ok {
			j, _ := strconv.Atoi(k)
			if t, _ := lx.wordTerm(ws[i+j-1]); t != "" {
				terms = append(terms, t)
			}
			continue
		}
		terms = append(terms, o)
	}
	return terms, r.taken - 1, true
}

// idiom reads an idiom of requests at ws[i] ("remind me", "open an
// issue", "drop a comment", "tick it off", a two-word verb): its terms and
// how many more words it takes.
func (lx *Lexicon) idiom(ws []string, i int) (terms []string, n int, ok bool) {
	for _, r := range lx.rules[ws[i]] {
		if ts, n, ok := r.match(lx, ws, i); ok {
			return ts, n, true
		}
	}
	return nil, 0, false
}
