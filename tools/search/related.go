package search

import (
	_ "embed"
	"strings"
)

//go:generate go run ./internal/genrelated

// relatedTable is WordNet's related words of common English words (see
// internal/genrelated and docs/search.md): a line per word in index form,
// the word then its related words, lines sorted. WordNet 3.0 Copyright
// 2006 by Princeton University; its license is wordnet-license.txt.
//
//go:embed related.txt
var relatedTable string

// related returns the related words of w (a term in index form), and
// whether w is mostly an argument's word (see arg-cover in tuning.txt), found by a
// binary search of the sorted table: nothing is loaded or built.
func related(w string) (rel []string, arg bool) {
	s := relatedTable
	lo, hi := 0, len(s) // line starts
	for lo < hi {
		mid := (lo + hi) / 2
		st := lo
		if i := strings.LastIndexByte(s[lo:mid], '\n'); i >= 0 {
			st = lo + i + 1
		}
		end := strings.IndexByte(s[st:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += st
		}
		key, rest, _ := strings.Cut(s[st:end], " ")
		key, class, _ := strings.Cut(key, ":")
		switch {
		case key == w:
			return strings.Fields(rest), class == "a"
		case key < w:
			lo = end + 1
		default:
			hi = st
		}
	}
	return nil, false
}

// irregularTable is WordNet's irregular forms of common verbs (wrote
// write, got get), a line per form: the form, then the verb in index form
// (see internal/genrelated).
//
//go:embed irregular.txt
var irregularTable string

// irregular maps an irregular verb form to its verb in index form; Terms
// applies it to tools and queries alike. About 550 entries, built when the
// package loads.
var irregular = func() map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(irregularTable, "\n") {
		if form, verb, ok := strings.Cut(line, " "); ok {
			m[form] = verb
		}
	}
	return m
}()
