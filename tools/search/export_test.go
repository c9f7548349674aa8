package search

import (
	"context"
	"math"

	"github.com/sandcall/sandcall/tools"
)

// Hooks for the external tests (compiled only with them).

// Typos returns the catalog's words one edit from w (see typos).
func (ix *Index) Typos(w string) []string { return ix.typos(w) }

// GateFeatures ranks query as Search does and returns the model's
// features of it (nil when no model decides: no hit, a tool named
// exactly, a family asked about), the five best tools, and, when no model
// decides, whether the answer is confident.
func (ix *Index) GateFeatures(query string) ([]float64, []Hit, bool) {
	r := ix.rank(context.Background(), query, 5, nil, true)
	if !r.weighed {
		return nil, r.hits, r.confident(ix.tn)
	}
	return r.x[:], r.hits, false
}

// Ranked returns the ranking of query before the gate decides.
func (ix *Index) Ranked(query string) []Hit { return ix.RankedN(query, 3) }

// GateModel is the weights of the gate's model as gate.txt holds it: the
// small catalogs' if small.
func GateModel(small bool) []float64 {
	t := builtinTuning()
	if small {
		return t.smallGateWeight[:]
	}
	return t.gateWeight[:]
}

// GateBias is the bias of the gate's model (the small catalogs' if
// small).
func GateBias(small bool) float64 {
	t := builtinTuning()
	if small {
		return t.smallGateBias
	}
	return t.gateBias
}

// SmallGateThreshold is the least probability of the small catalogs'
// model at which an answer is confident.
var SmallGateThreshold = builtinTuning().smallGateThreshold

// GateThreshold is the least probability of the model at which an
// answer is confident.
var GateThreshold = builtinTuning().gateThreshold

// RankedN returns the n best tools for query before the gate decides.
func (ix *Index) RankedN(query string, n int) []Hit {
	return ix.rank(context.Background(), query, n, nil, true).hits
}

// TuningRows are the names of the tuning files' rows.
func TuningRows() []string {
	var out []string
	for _, r := range builtinTuning().rows() {
		out = append(out, r.name)
	}
	return out
}

// NewRetuned indexes ts with the embedded tuning but row, each of whose
// values is multiplied by scale (a count rounded, and moved by one when
// it would not move).
func NewRetuned(ts []*tools.Tool, row string, scale float64) *Index {
	t := *builtinTuning()
	for _, r := range t.rows() {
		if r.name != row {
			continue
		}
		for _, p := range r.f {
			*p *= scale
		}
		if r.n != nil {
			n := int(math.Round(float64(*r.n) * scale))
			switch {
			case n == *r.n && scale > 1:
				n++
			case n == *r.n && n > 0:
				n--
			}
			*r.n = n
		}
	}
	return NewWith(ts, Options{tuning: &t})
}

// ParseTuning reads tuning files' texts as the embedded ones are read.
func ParseTuning(tuningTxt, gateTxt string) error {
	_, err := parseTuning(map[string]string{"tuning.txt": tuningTxt, "gate.txt": gateTxt})
	return err
}

// TuningTexts are the embedded tuning files' texts.
func TuningTexts() (tuningTxt, gateTxt string) { return tuningText, gateText }
