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
