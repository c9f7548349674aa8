package search_test

import (
	"slices"
	"testing"

	"github.com/sandcall/sandcall/tools/search"
)

// TestSameIndexSameAnswers builds the index of a real catalog several
// times and checks that each build finds the same near words for a
// misspelt word: typos stops at three, and the catalog's words come from
// a map, so without an order the three (and with them a query's features
// and ranking) changed from one build to the next.
func TestSameIndexSameAnswers(t *testing.T) {
	ts := loadRealCatalog(t)
	// Misspellings of the catalog's words: each of its words with a letter
	// changed, dropped or added.
	var words []string
	seen := map[string]bool{}
	for _, tool := range ts {
		for _, w := range search.Terms(tool.Name + " " + tool.Description) {
			if len(w) < 5 || seen[w] {
				continue
			}
			seen[w] = true
			words = append(words, w[:len(w)-1]+"e", w[:len(w)-1], w+"s", w[:1]+w[2:])
		}
	}
	first := search.New(ts)
	want := map[string][]string{}
	for _, w := range words {
		want[w] = first.Typos(w)
	}
	for range 5 {
		ix := search.New(ts)
		for _, w := range words {
			if got := ix.Typos(w); !slices.Equal(got, want[w]) {
				t.Fatalf("typos of %q: %v in one build, %v in another", w, want[w], got)
			}
		}
	}
}
