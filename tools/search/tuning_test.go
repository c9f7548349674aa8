package search_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/internal/testenv"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

// tuningProbe is a catalog and the queries whose answers a tuned number
// must move.
type tuningProbe struct {
	name  string
	tools []*tools.Tool
	qs    []string
}

// tuningProbes are the probes of TestTuningRows: the fixture and its
// queries, the first real catalog (where the gate's model decides) with
// its first query set and its family queries, and the small catalogs'
// seen sets (where the checks decide).
func tuningProbes(t *testing.T) []tuningProbe {
	var out []tuningProbe
	fix := tuningProbe{name: "fixture", tools: loadFixture(t)}
	for _, file := range []string{"testdata/queries.txt", "testdata/utterances.txt"} {
		for _, q := range loadQueries(t, file) {
			fix.qs = append(fix.qs, q.text)
		}
	}
	out = append(out, fix)
	real := tuningProbe{name: "realcatalog", tools: loadRealCatalog(t)}
	for _, file := range querySets(t, "testdata/realcatalog") {
		if slicesContains(gateHeldOut, strings.TrimSuffix(filepath.Base(file), ".json")) {
			continue
		}
		qs := loadQueryFile(t, file)
		for _, sec := range [][]realQuery{qs.Model, qs.Request, qs.Nomatch} {
			for _, q := range sec {
				real.qs = append(real.qs, q.Q)
			}
		}
	}
	real.qs = append(real.qs, "puppeteer", "what can the desktop commander server do", "web scraping and crawling")
	out = append(out, real)
	// The small catalogs cut from it (see smallSubsets), with its first
	// query set.
	var first []string
	qs := loadRealQueries(t)
	for _, sec := range [][]realQuery{qs.Model, qs.Request, qs.Nomatch} {
		for _, q := range sec {
			first = append(first, q.Q)
		}
	}
	for i, sub := range smallSubsets(t, "testdata/realcatalog") {
		out = append(out, tuningProbe{name: fmt.Sprintf("realcatalog subset %d", i), tools: sub, qs: first})
	}
	for _, name := range smallSets {
		if slicesContains(smallHeldOut, name) {
			continue
		}
		s, ts := loadSmallSet(t, name)
		p := tuningProbe{name: name, tools: ts}
		for _, sec := range [][]realQuery{s.Model, s.Request, s.Nomatch} {
			for _, q := range sec {
				p.qs = append(p.qs, q.Q)
			}
		}
		for _, q := range s.Family {
			p.qs = append(p.qs, q.Q)
		}
		out = append(out, p)
	}
	return out
}

// rowProbes are the probes of the rows the general ones do not move: a
// catalog and a query each row decides (found by searching every seen
// query on the real catalogs and their subsets with the row halved and
// doubled).
func rowProbes(t *testing.T) map[string]tuningProbe {
	sub := func(dir string, i int) []*tools.Tool { return smallSubsets(t, dir)[i] }
	return map[string]tuningProbe{
		"concept-floor":    {"realcatalog subset 0", sub("testdata/realcatalog", 0), []string{"crm deals associated with company"}},
		"vague-min":        {"realcatalog subset 0", sub("testdata/realcatalog", 0), []string{"find and replace text in file"}},
		"small-family":     {"realcatalog3 subset 1", sub("testdata/realcatalog3", 1), []string{"create a new linear project for the Q4 roadmap"}},
		"family-elsewhere": {"realcatalog2", loadCatalogDir(t, "testdata/realcatalog2"), []string{"jql search issues"}},
		"min-wide-family":  {"realcatalog subset 3", sub("testdata/realcatalog", 3), []string{"list all urls on a domain"}},
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// answers is what ix answers to qs, one line each: the tools, in order,
// and whether it is confident.
func answers(ix *search.Index, qs []string) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		r := ix.Search(bg, q, 5, nil)
		out[i] = fmt.Sprintf("%v %s", r.Confident, strings.Join(hitNames(r.Hits), " "))
	}
	return out
}

// TestTuningRows: every row of tuning.txt and gate.txt is a test case.
// The embedded files parse (every row once, each value a number, each
// count a whole number), and each row is live: halved or doubled, it
// moves an answer of the probes (see tuningProbes; a row the general
// probes do not move has its own, rowProbes). A row that moves none is a
// number the ranking no longer reads, or one no query tells from another
// value.
func TestTuningRows(t *testing.T) {
	if testing.Short() {
		t.Skip("searches the probes once per row")
	}
	if testenv.Race {
		t.Skip("-race: rows are numbers, not goroutines, and instrumented it takes about a minute; the plain test run checks them")
	}
	probes := tuningProbes(t)
	base := make([][]string, len(probes))
	for i, p := range probes {
		base[i] = answers(search.New(p.tools), p.qs)
	}
	own := rowProbes(t)
	for _, row := range search.TuningRows() {
		t.Run(row, func(t *testing.T) {
			probes, base := probes, base
			if p, ok := own[row]; ok {
				probes, base = []tuningProbe{p}, [][]string{answers(search.New(p.tools), p.qs)}
			}
			for _, scale := range []float64{0.5, 2} {
				for i, p := range probes {
					got := answers(search.NewRetuned(p.tools, row, scale), p.qs)
					for k := range got {
						if got[k] != base[i][k] {
							t.Logf("×%g, %s moves %s's %q: %s → %s", scale, row, p.name, p.qs[k], base[i][k], got[k])
							return
						}
					}
				}
			}
			t.Errorf("halved or doubled, %s moves no answer of the probes", row)
		})
	}
}

// TestTuningFileErrors: a tuning file that is not right is an error that
// names the file, the line and what is wrong.
func TestTuningFileErrors(t *testing.T) {
	tun, gate := search.TuningTexts()
	w := search.GateModel(false)
	n := len(w)
	if err := search.ParseTuning(tun, gate); err != nil {
		t.Fatalf("the embedded files: %v", err)
	}
	for _, c := range []struct{ tun, gate, want string }{
		{tun + "\nno-such-number 3\n", gate, "no tuned number is named"},
		{tun + "\nk1 1.2\n", gate, "k1 given twice"},
		{strings.Replace(tun, "\nk1 1.2\n", "\nk1 1.2 3\n", 1), gate, "k1 takes 1 values, not 2"},
		{strings.Replace(tun, "\nk1 1.2\n", "\nk1 fast\n", 1), gate, `k1: "fast" is not a number`},
		{strings.Replace(tun, "\nvague-min 8\n", "\nvague-min 8.5\n", 1), gate, `vague-min: "8.5" is not a count`},
		{strings.Replace(tun, "\nk1 1.2\n", "\n", 1), gate, "k1 is missing"},
		{tun, "gate-bias 1\n", "gate-weight is missing"},
		{tun, strings.Replace(gate, "gate-weight ", "gate-weight 1 ", 1), fmt.Sprintf("gate-weight takes %d values, not %d", n, n+1)},
	} {
		err := search.ParseTuning(c.tun, c.gate)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error saying %q, got %v", c.want, err)
		}
	}
	err := search.ParseTuning(tun+"\nk1 2\n", gate)
	if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("tuning.txt:%d: ", strings.Count(tun, "\n")+2)) {
		t.Errorf("a row given twice: %v, want the file and line", err)
	}
}
