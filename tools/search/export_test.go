package search

import "context"

// Hooks for the external tests (compiled only with them).

// Typos returns the catalog's words one edit from w (see typos).
func (ix *Index) Typos(w string) []string { return ix.typos(w) }

// GateFeatures ranks query as Search does and returns the model's
// features of it (nil when no gate decides: no hit, or a tool named
// exactly) and the five best tools.
func (ix *Index) GateFeatures(query string) ([]float64, []Hit) {
	r := ix.rank(context.Background(), query, 5, nil, true)
	if !r.weighed {
		return nil, r.hits
	}
	return r.x[:], r.hits
}

// Ranked returns the ranking of query before the gate decides.
func (ix *Index) Ranked(query string) []Hit { return ix.RankedN(query, 3) }

// GateModel is the gate's model as gateweights.go holds it.
func GateModel() (weight []float64, bias float64) { return gateWeight[:], gateBias }

// GateThreshold is the least probability of the model at which an
// answer is confident.
const GateThreshold = gateThreshold

// RankedN returns the n best tools for query before the gate decides.
func (ix *Index) RankedN(query string, n int) []Hit {
	return ix.rank(context.Background(), query, n, nil, true).hits
}
