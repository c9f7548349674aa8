package search

import (
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// The tuned numbers of the ranking and the confidence decision are data:
// tuning.txt (chosen by hand on the seen query sets; each row says what
// it does) and gate.txt (the gate's model, fitted by TestGateWeights).
// Both are embedded and read once; an Index reads its numbers from its
// tuning.

//go:embed tuning.txt
var tuningText string

//go:embed gate.txt
var gateText string

// tuning is the numbers of tuning.txt and gate.txt (see tuning.txt for
// what each does).
type tuning struct {
	fieldWeight, fieldB, fieldStrength [nFields]float64
	k1, serverB                        float64

	synonymWeight, typoWeight, derivedWeight, relatedWeight, conceptWeight float64
	contextWeight, argWeight, argCover                                     float64
	specificDF                                                             int
	specificShare                                                          float64

	confQuery, qBase, nameBoost                     float64
	verbBoost, verbPenalty, readOnlyPenalty         float64
	serverBoost, noObject                           float64
	brandMaxGroups                                  int
	brandConf, famNameCover, commonNameCover        float64
	minConfidence, shortQuery, longQuery, longFloor float64
	gateWindow                                      int
	conceptFloor, minRelative, vagueRatio           float64
	vagueMin, smallFamily                           int

	famShare, familyWide, familyElsewhere float64
	minWideWords, minWideFamily           int

	gateThreshold, smallGateThreshold float64
	gateMinTools, closest             int

	// The gate's models (gate.txt): their weights and biases, their
	// standardization folded in; the large catalogs' and the small ones'.
	gateWeight, smallGateWeight gateX
	gateBias, smallGateBias     float64
}

// tuningRow is a row of the tuning files: its name and where its values
// go, numbers or whole numbers.
type tuningRow struct {
	name string
	f    []*float64
	n    *int
}

// rows lists t's rows: tuning.txt's, then gate.txt's.
func (t *tuning) rows() []tuningRow {
	f := func(name string, p ...*float64) tuningRow { return tuningRow{name: name, f: p} }
	n := func(name string, p *int) tuningRow { return tuningRow{name: name, n: p} }
	fields := func(a *[nFields]float64) []*float64 {
		out := make([]*float64, nFields)
		for i := range a {
			out[i] = &a[i]
		}
		return out
	}
	gate := func(w *gateX) []*float64 {
		out := make([]*float64, nGate)
		for i := range w {
			out[i] = &w[i]
		}
		return out
	}
	return []tuningRow{
		f("field-weight", fields(&t.fieldWeight)...), f("field-b", fields(&t.fieldB)...), f("k1", &t.k1),
		f("field-strength", fields(&t.fieldStrength)...), f("server-b", &t.serverB),
		f("synonym-weight", &t.synonymWeight), f("typo-weight", &t.typoWeight), f("derived-weight", &t.derivedWeight),
		f("related-weight", &t.relatedWeight), f("concept-weight", &t.conceptWeight),
		f("context-weight", &t.contextWeight), f("arg-weight", &t.argWeight), f("arg-cover", &t.argCover),
		n("specific-df", &t.specificDF), f("specific-share", &t.specificShare),
		f("conf-query", &t.confQuery), f("q-base", &t.qBase), f("name-boost", &t.nameBoost),
		f("verb-boost", &t.verbBoost), f("verb-penalty", &t.verbPenalty), f("read-only-penalty", &t.readOnlyPenalty),
		f("server-boost", &t.serverBoost), f("no-object", &t.noObject),
		n("brand-max-groups", &t.brandMaxGroups), f("brand-conf", &t.brandConf),
		f("fam-name-cover", &t.famNameCover), f("common-name-cover", &t.commonNameCover),
		f("min-confidence", &t.minConfidence), f("short-query", &t.shortQuery), f("long-query", &t.longQuery),
		f("long-floor", &t.longFloor), n("gate-window", &t.gateWindow), f("concept-floor", &t.conceptFloor),
		f("min-relative", &t.minRelative), f("vague-ratio", &t.vagueRatio), n("vague-min", &t.vagueMin),
		n("small-family", &t.smallFamily),
		f("fam-share", &t.famShare), f("family-wide", &t.familyWide), f("family-elsewhere", &t.familyElsewhere),
		n("min-wide-words", &t.minWideWords), n("min-wide-family", &t.minWideFamily),
		f("gate-threshold", &t.gateThreshold), n("gate-min-tools", &t.gateMinTools),
		f("small-gate-threshold", &t.smallGateThreshold), n("closest", &t.closest),
		f("gate-weight", gate(&t.gateWeight)...), f("gate-bias", &t.gateBias),
		f("small-gate-weight", gate(&t.smallGateWeight)...), f("small-gate-bias", &t.smallGateBias),
	}
}

// parseTuning reads the tuning files' texts into a tuning: every row once,
// no other; a value a finite number, a count a whole number ≥ 0.
func parseTuning(files map[string]string) (*tuning, error) {
	t := &tuning{}
	rows := map[string]tuningRow{}
	for _, r := range t.rows() {
		rows[r.name] = r
	}
	seen := map[string]bool{}
	for _, file := range []string{"tuning.txt", "gate.txt"} {
		for i, line := range strings.Split(files[file], "\n") {
			line = strings.TrimSpace(line)
			if line == "" || line[0] == '#' {
				continue
			}
			bad := func(format string, a ...any) error {
				return fmt.Errorf("%s:%d: %s", file, i+1, fmt.Sprintf(format, a...))
			}
			fs := strings.Fields(line)
			r, ok := rows[fs[0]]
			switch {
			case !ok:
				return nil, bad("no tuned number is named %q", fs[0])
			case seen[fs[0]]:
				return nil, bad("%s given twice", fs[0])
			}
			seen[fs[0]] = true
			vals := fs[1:]
			if want := max(len(r.f), 1); len(vals) != want {
				return nil, bad("%s takes %d values, not %d", fs[0], want, len(vals))
			}
			for k, s := range vals {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
					return nil, bad("%s: %q is not a number", fs[0], s)
				}
				if r.n != nil {
					if v != math.Trunc(v) || v < 0 {
						return nil, bad("%s: %q is not a count", fs[0], s)
					}
					*r.n = int(v)
				} else {
					*r.f[k] = v
				}
			}
		}
	}
	for _, r := range t.rows() {
		if !seen[r.name] {
			return nil, fmt.Errorf("tuning: %s is missing", r.name)
		}
	}
	return t, nil
}

var (
	builtinTuningOnce sync.Once
	builtinTuningVal  *tuning
)

// builtinTuning is the embedded tuning, read once.
func builtinTuning() *tuning {
	builtinTuningOnce.Do(func() {
		t, err := parseTuning(map[string]string{"tuning.txt": tuningText, "gate.txt": gateText})
		if err != nil {
			panic("search: the embedded tuning files: " + err.Error())
		}
		builtinTuningVal = t
	})
	return builtinTuningVal
}
