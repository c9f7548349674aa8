package search

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/sandcall/sandcall/tools"
)

// The tests of the word files (words/*.txt): each row of each file is a
// generated test case, run as a subtest named after the row. A row added
// to a file is tested without a line of Go.

// wordTool is a tool of a test catalog.
func wordTool(name, source, desc string) *tools.Tool {
	return &tools.Tool{Name: name, Source: source, Description: desc,
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }}
}

// wordIndex is a small catalog none of whose words the rows name.
func wordIndex(extra ...*tools.Tool) *Index {
	ts := []*tools.Tool{
		wordTool("zeta_frob_widget", "zeta", "Frob a widget."),
		wordTool("zeta_list_widgets", "zeta", "List the widgets."),
		wordTool("eta_get_gadget", "eta", "Get a gadget."),
	}
	return New(append(ts, extra...))
}

// blankQuery is a query with nothing in it yet, for group.
func blankQuery(lx *Lexicon) *query { return &query{lx: lx, inQuery: map[string]float64{}} }

// TestWordSets: no set is empty, and the sets whose role one word shows
// do what they say for each of their words.
func TestWordSets(t *testing.T) {
	lx := builtin()
	for name, set := range lx.sets {
		if len(set.words) == 0 {
			t.Errorf("set %s is empty", name)
		}
	}
	each := func(set string, f func(t *testing.T, w string)) {
		for _, w := range lx.sets[set].words {
			t.Run(set+"/"+w, func(t *testing.T) { f(t, w) })
		}
	}
	each("stop", func(t *testing.T, w string) {
		if ts := lx.terms(w); len(ts) != 0 {
			t.Errorf("the stop word %q has terms %v", w, ts)
		}
	})
	for _, set := range []string{"verbs", "specific-verbs"} {
		each(set, func(t *testing.T, w string) {
			if !lx.verbs[w] {
				t.Errorf("%q is not a verb", w)
			}
		})
	}
	// A state-verb or a field-verb said of a field also means update.
	each("state-verbs", func(t *testing.T, w string) {
		if g := wordIndex().group(blankQuery(lx), w, []string{w}, nil); !slices.Contains(g.alts, lx.updateVerb) {
			t.Errorf("%q does not also mean %s: %v", w, lx.updateVerb, g.alts)
		}
	})
	each("fields", func(t *testing.T, w string) {
		for _, v := range lx.sets["field-verbs"].words {
			if g := wordIndex().group(blankQuery(lx), v, []string{v, w}, nil); !slices.Contains(g.alts, lx.updateVerb) {
				t.Errorf("%s the %s does not also mean %s", v, w, lx.updateVerb)
			}
		}
	})
	each("question-openers", func(t *testing.T, w string) {
		if !lx.isQuestion(w + " widgets are frobbed") {
			t.Errorf("%q does not open a question", w)
		}
	})
	each("languages", func(t *testing.T, w string) {
		if !lx.namesLanguage("put this into " + w) {
			t.Errorf("%q is no language", w)
		}
	})
	each("tlds", func(t *testing.T, w string) {
		if k := lx.literalKind("docs.example." + w); k != "url" {
			t.Errorf("docs.example.%s is a %q, want url", w, k)
		}
	})
	each("slash-pairs", func(t *testing.T, w string) {
		if got, _ := lx.stripLiterals("frob the widgets "+w+" now", nil); !strings.Contains(got, w) {
			t.Errorf("%q was stripped as a literal: %q", w, got)
		}
	})
	each("dates", func(t *testing.T, w string) {
		ix := wordIndex(wordTool(strings.ToLower(w)+"_list_boards", strings.ToLower(w), "List boards."),
			wordTool(strings.ToLower(w)+"_get_board", strings.ToLower(w), "Get a board."))
		if got := ix.dropDates("list the boards due on " + w); strings.Contains(got, w) {
			t.Errorf("the date %q was read as the family: %q", w, got)
		}
	})
	each("containers", func(t *testing.T, w string) {
		if got := wordIndex().stripNames("frob my Widget " + w); strings.Contains(got, "Widget") {
			t.Errorf("the name before %q was not stripped: %q", w, got)
		}
	})
}

// TestSynonymRows: each word of a group is searched as the others.
func TestSynonymRows(t *testing.T) {
	lx := builtin()
	for _, g := range lx.synonymGroups {
		t.Run(strings.Join(g.terms, "_"), func(t *testing.T) {
			for _, a := range g.terms {
				for _, b := range g.terms {
					if a != b && !slices.Contains(lx.synonyms[a], b) {
						t.Errorf("%s is not a synonym of %s", b, a)
					}
				}
				if g.kind != "word" && !lx.verbs[a] {
					t.Errorf("%s: no verb, in a %s group", a, g.kind)
				}
			}
		})
	}
}

// TestMeansRows: a word also means what [means] says; a canonical form
// and an abbreviation are what text reads.
func TestMeansRows(t *testing.T) {
	lx := builtin()
	ix := wordIndex()
	for w, means := range lx.oneWay {
		t.Run("means/"+w, func(t *testing.T) {
			g := ix.group(blankQuery(lx), w, []string{w}, nil)
			for _, m := range means {
				if !slices.Contains(g.alts, m) {
					t.Errorf("%s does not also mean %s: %v", w, m, g.alts)
				}
			}
		})
	}
	for k, c := range lx.canon {
		t.Run("canonical/"+k, func(t *testing.T) {
			if got, _ := lx.wordTerm(k); got != c {
				t.Errorf("%s reads as %q, want %q", k, got, c)
			}
		})
	}
	for a, exp := range lx.expand {
		t.Run("abbreviation/"+a, func(t *testing.T) {
			if got := lx.terms(a); !slices.Equal(got, exp) {
				t.Errorf("%s reads as %v, want %v", a, got, exp)
			}
		})
	}
}

// example is a text a phrasal rule reads: the first choice of each slot
// it takes and looks ahead to, and what $n of it means.
func (r *phrasal) example(lx *Lexicon) (words []string, want []string) {
	for _, s := range r.slots {
		switch {
		case s.look < 0:
			continue // nothing follows
		case s.any:
			words = append(words, "widget")
		case s.set != "":
			words = append(words, lx.sets[s.set].words[0])
		case s.prefix != "":
			words = append(words, s.prefix+"s")
		default:
			words = append(words, s.words[0])
		}
	}
	for _, o := range r.out {
		if n, ok := strings.CutPrefix(o, "$"); ok {
			var k int
			fmt.Sscan(n, &k)
			if t, _ := lx.wordTerm(words[k-1]); t != "" {
				want = append(want, t)
			}
			continue
		}
		want = append(want, o)
	}
	return words, want
}

// TestPhrasalRows: each pattern reads as what it means, in an example
// made of its slots' first choices; a two-word verb also opens a verb's
// object in a tool's description, even when an earlier pattern of its
// first word reads the two words first.
func TestPhrasalRows(t *testing.T) {
	lx := builtin()
	for _, r := range lx.ruleList {
		words, want := r.example(lx)
		t.Run(strings.Join(words, "_"), func(t *testing.T) {
			if a, b, ok := r.pair(); ok {
				obj := map[string]bool{}
				lx.directTerms(a+" "+b+" the gizmo", obj)
				if lx.verbs[lx.pairs[[2]string{a, b}]] && !obj["gizmo"] {
					t.Errorf("%s %s opens no object: %v", a, b, obj)
				}
				if got, _, _ := lx.idiom(words, 0); !slices.Equal(got, want) && lx.rules[a][0] == r {
					t.Errorf("%s reads as %v, want %v", strings.Join(words, " "), got, want)
				}
				return
			}
			got, n, ok := lx.idiom(words, 0)
			if !ok || !slices.Equal(got, want) || n != r.taken-1 {
				t.Errorf("%s reads as %v (taking %d more), want %v (taking %d)", strings.Join(words, " "), got, n, want, r.taken-1)
			}
		})
	}
}

// TestHintRows: a request with a hint's phrase, word or literal gets its
// word, at synonym weight.
func TestHintRows(t *testing.T) {
	lx := builtin()
	ix := wordIndex()
	has := func(t *testing.T, text, term string) {
		t.Helper()
		q := ix.analyze(text)
		if q == nil || !slices.ContainsFunc(q.groups, func(g group) bool { return g.terms[0] == term }) {
			t.Errorf("%q does not imply %s", text, term)
		}
	}
	for _, h := range lx.containsHints {
		t.Run("contains/"+h.phrase, func(t *testing.T) { has(t, "frob widgets, "+h.phrase+" of them", h.term) })
	}
	for _, h := range lx.wordHints {
		for w := range h.words {
			t.Run("word/"+w, func(t *testing.T) { has(t, w+" frobbed the widgets", h.term) })
		}
	}
	examples := map[string]string{"url": "https://example.com/widgets", "file": "./widgets/list.yaml", "phone": "+14155550123", "reference": "#231"}
	for k, term := range lx.kindHints {
		t.Run("kind/"+k, func(t *testing.T) { has(t, "frob the widget "+examples[k], term) })
	}
}

// TestServiceRows: a request naming a service the catalog lacks asks for
// a tool of it; one of common words only when written capitalized; a
// suite's product by the suite's word and its own.
func TestServiceRows(t *testing.T) {
	lx := builtin()
	ix := wordIndex()
	title := func(s string) string { return string(unicode.ToUpper(rune(s[0]))) + s[1:] }
	for s := range lx.services {
		t.Run("names/"+s, func(t *testing.T) {
			q := "Please frob the widget in " + title(s) + "."
			if !ix.namesAbsentService(q, q) {
				t.Errorf("%q names no absent service", q)
			}
			if lx.commonServices[s] {
				q := "please frob the widget, " + s + " and all"
				if ix.namesAbsentService(q, q) {
					t.Errorf("%q: the common word %s read as the service", q, s)
				}
			}
		})
	}
	for suite, products := range lx.suites {
		for p := range products {
			t.Run("suite/"+suite+"/"+p, func(t *testing.T) {
				q := "Please frob the widget in " + title(suite) + " " + title(p) + "."
				if !ix.namesAbsentService(q, q) {
					t.Errorf("%q names no absent service", q)
				}
			})
		}
	}
}

// TestConceptRows: every way to say a concept says it — in a request
// made of its phrases when it has only such conditions, and in the
// concept's examples, which every concept has — through the whole
// analyze stage.
func TestConceptRows(t *testing.T) {
	lx := builtin()
	ix := wordIndex()
	for _, c := range lx.concepts {
		t.Run(strings.Join(c.terms, "_"), func(t *testing.T) {
			if len(c.examples) == 0 {
				t.Fatalf("the concept has no example")
			}
			for _, way := range c.when {
				cu := &cue{}
				made := true
				for _, d := range way {
					switch d.kind {
					case "says", "contains":
						cu.lower += d.phrases[0] + " "
					case "starts":
						cu.lower = d.phrases[0] + cu.lower
					case "query-contains":
						cu.query += d.phrases[0] + " "
					case "kind":
						cu.kinds = append(cu.kinds, d.arg)
					case "!says", "!contains":
					default:
						made = false
					}
				}
				if made && !lx.says(&c, cu) {
					t.Errorf("a request made of its phrases (%q) does not say it", cu.lower+cu.query)
				}
				// Each phrase of a lone says says it alone.
				if len(way) == 1 && way[0].kind == "says" {
					for _, p := range way[0].phrases {
						if !lx.says(&c, &cue{lower: p}) {
							t.Errorf("%q does not say it", p)
						}
					}
				}
			}
			for _, e := range c.examples {
				q := ix.analyze(e)
				if q == nil || q.concepts[c.terms[0]] == nil {
					t.Errorf("the example %q does not say it", e)
				}
			}
		})
	}
}

// TestRephrasingRows: every rephrasing has an example it rephrases.
func TestRephrasingRows(t *testing.T) {
	lx := builtin()
	for _, r := range lx.rephrasings {
		t.Run(r.repl, func(t *testing.T) {
			if len(r.examples) == 0 {
				t.Fatalf("the rephrasing has no example")
			}
			for _, e := range r.examples {
				if got := lx.rephrase(e); got == e {
					t.Errorf("%q is not rephrased", e)
				}
			}
		})
	}
}

// TestAsWritten: a word of a word file is stemmed as text is, unless
// written =word.
func TestAsWritten(t *testing.T) {
	lx, err := ParseLexicon("t.txt", "[abbreviations]\nzq: merge\nzr: =merge\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lx.expand["zq"], lx.terms("merge"); !slices.Equal(got, want) {
		t.Errorf("zq reads as %v, want %v (merge as text reads)", got, want)
	}
	if got := lx.expand["zr"]; !slices.Equal(got, []string{"merge"}) {
		t.Errorf("zr reads as %v, want [merge] as written", got)
	}
}
