package search_test

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sandcall/sandcall/tools/search"
)

var updateGate = flag.Bool("update", false, "refit the gate's model and rewrite gate.txt")

// gateCatalogs are the real catalogs whose query sets the gate's model is
// fitted to.
var gateCatalogs = []string{"testdata/realcatalog", "testdata/realcatalog2", "testdata/realcatalog3", "testdata/realcatalog4", "testdata/realcatalog5"}

// gateHeldOut are the query sets the model is not fitted to: written by
// helper sessions and never looked at, they measure it (see the package
// doc).
var gateHeldOut = []string{
	"blind19", "blind20", "blindc2j", "blindc3n", "blindc3o", "blindc4j", "blindc4k", "blindc4l",
	"blindc5d", "blindc5e", "blindc5f", "blindc5g", "blindc5h",
	// Written after the model was fitted.
	"blind21", "blindc3p", "blindc4m", "blindc5i",
	// Written in the twentieth round.
	"blind22", "blindc2k", "blindc3q", "blindc4n", "blindc5j",
}

// gateQuery is a query of the sets as the gate sees it.
type gateQuery struct {
	cat, kind string // its catalog; model, request or nomatch
	x         []float64
	// rank is where the first tool it wants is among the five best,
	// before the confidence decision (-1: not there); right: among the
	// three best.
	rank  int
	right bool
	// sure: when no model decides it (x is nil), whether it is answered
	// confidently.
	sure bool
	// derived: a no-match request of a small subset asked of a server it
	// lacks (see subset).
	derived bool
}

var (
	gateOnce, smallOnce     sync.Once
	gateRanked, smallRanked []gateQuery
)

// smallGateQueries ranks the seen sets' queries on the small subsets of
// the real catalogs (see subsets), once: what the small catalogs' model
// is fitted to.
func smallGateQueries(t testing.TB) []gateQuery {
	smallOnce.Do(func() {
		for _, s := range subsets(t, false) {
			ix := search.New(s.tools)
			add := func(kind string, qs []realQuery, derived bool) {
				for _, q := range qs {
					x, hits, sure := ix.GateFeatures(q.Q)
					rank := slices.IndexFunc(hits, func(h search.Hit) bool { return slices.Contains(q.Want, h.Tool.Name) })
					smallRanked = append(smallRanked, gateQuery{cat: s.cat, kind: kind, x: x, rank: rank, right: rank >= 0 && rank < 3, sure: sure, derived: derived})
				}
			}
			add("model", s.qs.Model, false)
			add("request", s.qs.Request, false)
			add("nomatch", s.qs.Nomatch, false)
			add("nomatch", s.derived, true)
		}
	})
	if smallRanked == nil {
		t.Fatal("the subsets' queries could not be ranked")
	}
	return smallRanked
}

// gateQueries ranks every query of the catalogs' sets but the held-out
// ones, once for the tests that need them.
func gateQueries(t testing.TB) []gateQuery {
	gateOnce.Do(func() { gateRanked = rankGateQueries(t) })
	if gateRanked == nil {
		t.Fatal("the query sets could not be ranked")
	}
	return gateRanked
}

func rankGateQueries(t testing.TB) []gateQuery {
	var out []gateQuery
	for _, dir := range gateCatalogs {
		ix := search.New(loadCatalogDir(t, dir))
		for _, f := range querySets(t, dir) {
			if slices.Contains(gateHeldOut, strings.TrimSuffix(filepath.Base(f), ".json")) {
				continue
			}
			qs := loadQueryFile(t, f)
			for _, sec := range []struct {
				kind string
				qs   []realQuery
			}{{"model", qs.Model}, {"request", qs.Request}, {"nomatch", qs.Nomatch}} {
				for _, q := range sec.qs {
					x, hits, sure := ix.GateFeatures(q.Q)
					rank := slices.IndexFunc(hits, func(h search.Hit) bool { return slices.Contains(q.Want, h.Tool.Name) })
					out = append(out, gateQuery{cat: dir, kind: sec.kind, x: x, rank: rank, right: rank >= 0 && rank < 3, sure: sure})
				}
			}
		}
	}
	return out
}

// fitGate fits the model to qs: a no-match request is a 0; an answerable
// query whose tool is among the three best a 1 (the others are misses
// whatever the gate says). A logistic regression on standardized features
// with an L2 penalty of 1/2 on the coefficients (not the bias), by
// Newton's method; the standardization is folded into the weights it
// returns.
func fitGate(qs []gateQuery) (weight []float64, bias float64) {
	var xs [][]float64
	var ys []float64
	for _, q := range qs {
		if q.x == nil || q.kind != "nomatch" && !q.right {
			continue
		}
		xs = append(xs, q.x)
		ys = append(ys, b2f(q.kind != "nomatch"))
	}
	d, n := len(xs[0]), float64(len(xs))
	mean, scale := make([]float64, d), make([]float64, d)
	for _, x := range xs {
		for j, v := range x {
			mean[j] += v / n
		}
	}
	for _, x := range xs {
		for j, v := range x {
			scale[j] += (v - mean[j]) * (v - mean[j]) / n
		}
	}
	for j := range scale {
		if scale[j] = math.Sqrt(scale[j]); scale[j] < 1e-9 {
			scale[j] = 1
		}
	}
	// z[i][0] is the bias's 1.
	z := make([][]float64, len(xs))
	for i, x := range xs {
		z[i] = make([]float64, d+1)
		z[i][0] = 1
		for j, v := range x {
			z[i][j+1] = (v - mean[j]) / scale[j]
		}
	}
	beta := make([]float64, d+1)
	for range 50 {
		grad := make([]float64, d+1)
		hess := make([][]float64, d+1)
		for j := range hess {
			hess[j] = make([]float64, d+1)
		}
		for i, zi := range z {
			var s float64
			for j, v := range zi {
				s += beta[j] * v
			}
			p := 1 / (1 + math.Exp(-s))
			for j, v := range zi {
				grad[j] += (p - ys[i]) * v
				for k := j; k <= d; k++ {
					hess[j][k] += p * (1 - p) * v * zi[k]
				}
			}
		}
		for j := 1; j <= d; j++ {
			grad[j] += beta[j]
			hess[j][j]++
		}
		for j := range hess {
			for k := 0; k < j; k++ {
				hess[j][k] = hess[k][j]
			}
		}
		step, most := solve(hess, grad), 0.0
		for j := range beta {
			beta[j] -= step[j]
			most = max(most, math.Abs(step[j]))
		}
		if most < 1e-10 {
			break
		}
	}
	weight, bias = make([]float64, d), beta[0]
	for j := range weight {
		weight[j] = beta[j+1] / scale[j]
		bias -= weight[j] * mean[j]
	}
	return weight, bias
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// solve solves a x = b by Gaussian elimination with partial pivoting (a
// and b are spoilt).
func solve(a [][]float64, b []float64) []float64 {
	n := len(b)
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		b[c], b[p] = b[p], b[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < n; k++ {
				a[r][k] -= f * a[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x
}

// TestGateWeights refits the gate's model to the query sets and checks
// that gate.txt holds that fit (go test -run TestGateWeights -update
// rewrites it): the weights come from the labelled queries, and a change
// to the ranking that moves the features shows here.
func TestGateWeights(t *testing.T) {
	if testing.Short() {
		t.Skip("ranks every query of the real catalogs")
	}
	weight, bias := fitGate(gateQueries(t))
	sweight, sbias := fitGate(smallGateQueries(t))
	if *updateGate {
		var b bytes.Buffer
		b.WriteString("# Generated by TestGateWeights -update; DO NOT EDIT.\n#\n" +
			"# The gate's models (confidence.go): logistic models over the features of\n" +
			"# gateX, their standardization folded into the weights. gate-: fitted to\n" +
			"# the real catalogs' seen query sets; small-gate-: to the same sets'\n" +
			"# queries on the small catalogs cut from the real ones (subsets_test.go).\n")
		for _, m := range []struct {
			name string
			w    []float64
			b    float64
		}{{"gate", weight, bias}, {"small-gate", sweight, sbias}} {
			b.WriteString(m.name + "-weight")
			for _, w := range m.w {
				fmt.Fprintf(&b, " %.9g", w)
			}
			fmt.Fprintf(&b, "\n%s-bias %.9g\n", m.name, m.b)
		}
		if err := os.WriteFile("gate.txt", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*max(1, math.Abs(a), math.Abs(b)) }
	for _, m := range []struct {
		name    string
		w, fit  []float64
		b, fitB float64
	}{{"gate", search.GateModel(false), weight, search.GateBias(false), bias}, {"small-gate", search.GateModel(true), sweight, search.GateBias(true), sbias}} {
		for j := range m.fit {
			if !near(m.w[j], m.fit[j]) {
				t.Fatalf("gate.txt's %s is not the fit to the query sets (feature %d: %g, fit %g): run go test -run TestGateWeights -update", m.name, j, m.w[j], m.fit[j])
			}
		}
		if !near(m.b, m.fitB) {
			t.Fatalf("gate.txt's %s bias %g, fit %g: run go test -run TestGateWeights -update", m.name, m.b, m.fitB)
		}
	}
}

// leftOut are what a model decides, fitted on four catalogs' queries and
// judged on the fifth's, each in turn, at a threshold.
type leftOut struct {
	nomatch, nomatchN, derived, derivedN, sure, answerable int
}

func (l leftOut) String() string {
	s := fmt.Sprintf("no-match not confident %d/%d (%.1f%%), answerable confident %d/%d (%.1f%%)",
		l.nomatch, l.nomatchN, pct(l.nomatch, l.nomatchN), l.sure, l.answerable, pct(l.sure, l.answerable))
	if l.derivedN > 0 {
		s += fmt.Sprintf(", asked of servers the catalog lacks not confident %d/%d (%.1f%%)", l.derived, l.derivedN, pct(l.derived, l.derivedN))
	}
	return s
}

// judgeLeftOut judges qs left out in turn at each threshold; with veto,
// a query one of the five checks fails is not confident whatever the
// model says (as in a small catalog).
func judgeLeftOut(qs []gateQuery, thresholds []float64, veto bool) []leftOut {
	out := make([]leftOut, len(thresholds))
	for _, cat := range gateCatalogs {
		var fit []gateQuery
		for _, q := range qs {
			if q.cat != cat {
				fit = append(fit, q)
			}
		}
		weight, bias := fitGate(fit)
		for _, q := range qs {
			if q.cat != cat {
				continue
			}
			p := b2f(q.sure) // no model decides
			if q.x != nil {
				z := bias
				for j, v := range q.x {
					z += weight[j] * v
				}
				p = 1 / (1 + math.Exp(-z))
				if veto && q.x[0]+q.x[1]+q.x[2]+q.x[3]+q.x[4] > 0 {
					p = 0 // a check fails
				}
			}
			for k, th := range thresholds {
				l, conf := &out[k], p >= th
				switch {
				case q.kind == "nomatch" && q.derived:
					l.derivedN++
					l.derived += b2i(!conf)
				case q.kind == "nomatch":
					l.nomatchN++
					l.nomatch += b2i(!conf)
				default:
					l.answerable++
					l.sure += b2i(conf)
				}
			}
		}
	}
	return out
}

var sweep = flag.Bool("sweep", false, "TestGateLeftOut logs the models left out at other thresholds")

// TestGateLeftOut fits each model on four catalogs' sets and tries it on
// the fifth's, each in turn (the catalogs the hidden benchmark judges on
// are none of them). The large catalogs' model, at gate-threshold: at
// least 90% of no-match requests must be answered not confident, and at
// least 78% of answerable queries confidently (80.5% when the threshold
// was chosen). The small catalogs' model, at small-gate-threshold, on the
// small subsets (see subsets), where a query a check fails is not
// confident whatever the model says: at least 92% of no-match requests,
// and 86% of those asked of servers the subset lacks, answered not
// confident, and at least 84% of answerable queries confidently (93.9%,
// 88.7% and 86.4% when the threshold was chosen; the checks alone 91.5%,
// 83.5% and 88.3%). With -sweep it logs other thresholds.
func TestGateLeftOut(t *testing.T) {
	if testing.Short() {
		t.Skip("ranks every query of the real catalogs")
	}
	for _, m := range []struct {
		name                   string
		qs                     []gateQuery
		th                     float64
		veto                   bool
		nomatch, derived, sure float64
	}{
		{"large catalogs", gateQueries(t), search.GateThreshold, false, 90, 0, 78},
		{"small catalogs", smallGateQueries(t), search.SmallGateThreshold, true, 92, 86, 84},
	} {
		l := judgeLeftOut(m.qs, []float64{m.th}, m.veto)[0]
		t.Logf("%s, left out in turn at %g: %s", m.name, m.th, l)
		if pct(l.nomatch, l.nomatchN) < m.nomatch || l.derivedN > 0 && pct(l.derived, l.derivedN) < m.derived || pct(l.sure, l.answerable) < m.sure {
			t.Errorf("%s, left out in turn: %s; want at least %g%% of no-match requests, %g%% asked of servers the catalog lacks, not confident and %g%% of answerable queries confident",
				m.name, l, m.nomatch, m.derived, m.sure)
		}
		if *sweep {
			ths := []float64{0.03, 0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.83, 0.85, 0.9}
			for k, l := range judgeLeftOut(m.qs, ths, m.veto) {
				t.Logf("%s at %g: %s", m.name, ths[k], l)
			}
		}
	}
}
