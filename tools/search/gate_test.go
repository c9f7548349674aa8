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
}

var (
	gateOnce   sync.Once
	gateRanked []gateQuery
)

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
					x, hits := ix.GateFeatures(q.Q)
					rank := slices.IndexFunc(hits, func(h search.Hit) bool { return slices.Contains(q.Want, h.Tool.Name) })
					out = append(out, gateQuery{cat: dir, kind: sec.kind, x: x, rank: rank, right: rank >= 0 && rank < 3})
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
	qs := gateQueries(t)
	weight, bias := fitGate(qs)
	if *updateGate {
		var b bytes.Buffer
		b.WriteString("# Generated by TestGateWeights -update; DO NOT EDIT.\n#\n" +
			"# The gate's model (confidence.go): a logistic model over the features of\n" +
			"# gateX, fitted to the real catalogs' seen query sets, its standardization\n" +
			"# folded into the weights.\ngate-weight")
		for _, w := range weight {
			fmt.Fprintf(&b, " %.9g", w)
		}
		fmt.Fprintf(&b, "\ngate-bias %.9g\n", bias)
		if err := os.WriteFile("gate.txt", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	w, b := search.GateModel()
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*max(1, math.Abs(a), math.Abs(b)) }
	for j := range weight {
		if !near(w[j], weight[j]) {
			t.Fatalf("gate.txt is not the fit to the query sets (feature %d: %g, fit %g): run go test -run TestGateWeights -update", j, w[j], weight[j])
		}
	}
	if !near(b, bias) {
		t.Fatalf("gate bias %g, fit %g: run go test -run TestGateWeights -update", b, bias)
	}
}

// TestGateLeftOut fits the model on four catalogs' sets and tries it on
// the fifth's, each in turn (the catalogs the hidden benchmark judges on
// are none of them): at gateThreshold, at least 90% of no-match requests
// must be answered not confident, and at least 78% of answerable queries
// confidently (80.5% when the threshold was chosen). An answer that is
// not confident holds the closest five, so the decision no longer costs a
// whole request a right tool in its first five; it logs how many keep one
// in the first five whatever the decision, and how many would with the
// closest three only (the fourth and fifth kept only when confident).
func TestGateLeftOut(t *testing.T) {
	if testing.Short() {
		t.Skip("ranks every query of the real catalogs")
	}
	qs := gateQueries(t)
	var nomatch, nomatchN, req5, req5of3, reqN, sure, answerable int
	for _, cat := range gateCatalogs {
		var fit []gateQuery
		for _, q := range qs {
			if q.cat != cat {
				fit = append(fit, q)
			}
		}
		weight, bias := fitGate(fit)
		for _, q := range qs {
			if q.cat != cat || q.x == nil {
				continue
			}
			z := bias
			for j, v := range q.x {
				z += weight[j] * v
			}
			conf := 1/(1+math.Exp(-z)) >= search.GateThreshold
			switch q.kind {
			case "nomatch":
				nomatchN++
				nomatch += b2i(!conf)
			case "request":
				reqN++
				req5 += b2i(q.rank >= 0)
				req5of3 += b2i(q.right || q.rank >= 0 && conf)
			}
			if q.kind != "nomatch" {
				answerable++
				sure += b2i(conf)
			}
		}
	}
	t.Logf("left out in turn: no-match not confident %d/%d (%.1f%%), answerable confident %d/%d (%.1f%%), requests top-5 %d/%d (%.1f%%; %d with the closest three only)",
		nomatch, nomatchN, pct(nomatch, nomatchN), sure, answerable, pct(sure, answerable), req5, reqN, pct(req5, reqN), req5of3)
	if pct(nomatch, nomatchN) < 90 || pct(sure, answerable) < 78 {
		t.Errorf("left out in turn, the model answers %.1f%% of no-match requests not confident (want 90%%) and %.1f%% of answerable queries confidently (want 78%%)",
			pct(nomatch, nomatchN), pct(sure, answerable))
	}
}
