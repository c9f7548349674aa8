package search_test

import (
	"context"

	"github.com/sandcall/sandcall/tools/search"
)

// bg is the context of the tests' searches.
var bg = context.Background()

// sure is a search's confident answer: its hits and total when it is
// confident, nothing when it is not. A test that a query "finds nothing"
// tests that the answer is not confident.
func sure(r search.Result) ([]search.Hit, int) {
	if !r.Confident {
		return nil, 0
	}
	return r.Hits, r.Total
}

// hitsOf is a search's answer, confident or not: the tools it ranks
// first and their total. A test of a ranking mechanism asks whether the
// tool is among them.
func hitsOf(r search.Result) ([]search.Hit, int) { return r.Hits, r.Total }
