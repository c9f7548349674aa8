package search_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

// realQueries is testdata/realcatalog/queries.json.
type realQueries struct {
	Model   []realQuery `json:"model"`
	Request []realQuery `json:"request"`
	Nomatch []realQuery `json:"nomatch"`
}

type realQuery struct {
	Q    string   `json:"q"`
	Want []string `json:"want"`
	// The held-out file's spelling of the same fields.
	Query  string   `json:"query"`
	Accept []string `json:"accept"`
}

var nonName = regexp.MustCompile(`[^a-z0-9_]+`)

// catalogName is a tool's name in sandcall's catalog: <server>_<tool>,
// lower-cased, other characters as _, runs of _ collapsed, the server not
// repeated (as tools/upstream names them).
func catalogName(server, tool string) string {
	clean := func(s string) string {
		s = nonName.ReplaceAllString(strings.ToLower(s), "_")
		for strings.Contains(s, "__") {
			s = strings.ReplaceAll(s, "__", "_")
		}
		return s
	}
	p, t := clean(server)+"_", clean(tool)
	if strings.HasPrefix(t, p) {
		return t
	}
	return p + t
}

// loadRealCatalog reads the tools of testdata/realcatalog: real MCP
// servers' tools/list answers, as tools/upstream adds them to a catalog
// (name <server>_<tool>, source the server, title the tool's or its
// annotations').
func loadRealCatalog(t testing.TB) []*tools.Tool { return loadCatalogDir(t, "testdata/realcatalog") }

// loadCatalogDir reads the tools of a directory of captured tools/list
// answers (see loadRealCatalog), its query files left out.
func loadCatalogDir(t testing.TB, dir string) []*tools.Tool {
	t.Helper()
	files, err := filepath.Glob(dir + "/*.json")
	if err != nil {
		t.Fatal(err)
	}
	var ts []*tools.Tool
	for _, f := range files {
		if b := filepath.Base(f); b == "queries.json" || b == "mcp.json" || strings.HasPrefix(b, "blind") || b == "heldout.json" {
			continue
		}
		ts = append(ts, loadServerFile(t, f)...)
	}
	return ts
}

// loadServerFile reads the tools of one captured tools/list answer (see
// loadRealCatalog).
func loadServerFile(t testing.TB, f string) []*tools.Tool {
	t.Helper()
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var srv struct {
		Server string `json:"server"`
		Tools  []struct {
			Name        string             `json:"name"`
			Title       string             `json:"title"`
			Description string             `json:"description"`
			InputSchema *jsonschema.Schema `json:"inputSchema"`
			Annotations struct {
				Title string `json:"title"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(data, &srv); err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	var ts []*tools.Tool
	for _, x := range srv.Tools {
		if x.Title == "" { // as tools/upstream does
			x.Title = x.Annotations.Title
		}
		name, src := catalogName(srv.Server, x.Name), srv.Server
		if srv.Server == "" { // sandcall's own tools
			name, src = x.Name, "builtin"
		}
		ts = append(ts, &tools.Tool{Name: name, Title: x.Title, Description: x.Description,
			InputSchema: x.InputSchema, Source: src, SourceName: x.Name,
			Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }})
	}
	return ts
}

// querySets returns the labelled query files of a catalog's directory
// (queries.json, heldout.json and the blind*.json sets), sorted.
func querySets(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(dir + "/*.json")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if b := filepath.Base(f); strings.HasPrefix(b, "blind") || b == "queries.json" || b == "heldout.json" {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

func loadRealQueries(t testing.TB) realQueries { return loadQueryFile(t, "queries.json") }

func loadQueryFile(t testing.TB, name string) realQueries {
	t.Helper()
	if !strings.Contains(name, "/") {
		name = "testdata/realcatalog/" + name
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var qs realQueries
	if err := json.Unmarshal(data, &qs); err != nil {
		t.Fatal(err)
	}
	for _, set := range [][]realQuery{qs.Model, qs.Request, qs.Nomatch} {
		for i := range set {
			if set[i].Q == "" {
				set[i].Q, set[i].Want = set[i].Query, set[i].Accept
			}
		}
	}
	return qs
}

// figures are what a query set's answers are worth: model-style queries
// with a right tool among the first three tools answered, whole requests
// with one among the first three and five, no-match requests answered
// not confident, answerable queries answered confidently; and whole
// requests with a right tool in the ranking's best three and ten before
// the confidence decision (what a better decision, or ranking, could
// gain).
type figures struct {
	model, modelN     int
	req3, req5, reqN  int
	nomatch, nomatchN int
	sure, answerable  int
	ranked3, ranked10 int
}

func (f *figures) add(g figures) {
	f.model, f.modelN = f.model+g.model, f.modelN+g.modelN
	f.req3, f.req5, f.reqN = f.req3+g.req3, f.req5+g.req5, f.reqN+g.reqN
	f.nomatch, f.nomatchN = f.nomatch+g.nomatch, f.nomatchN+g.nomatchN
	f.sure, f.answerable = f.sure+g.sure, f.answerable+g.answerable
	f.ranked3, f.ranked10 = f.ranked3+g.ranked3, f.ranked10+g.ranked10
}

func pct(a, n int) float64 { return 100 * float64(a) / float64(max(n, 1)) }

func (f figures) String() string {
	return fmt.Sprintf("model-style top-3 %d/%d (%.1f%%); whole requests top-3 %d/%d (%.1f%%), top-5 %d (%.1f%%); "+
		"no-match not confident %d/%d (%.1f%%); answerable confident %d/%d (%.1f%%); requests ranked top-3 %.1f%%, top-10 %.1f%%",
		f.model, f.modelN, pct(f.model, f.modelN), f.req3, f.reqN, pct(f.req3, f.reqN), f.req5, pct(f.req5, f.reqN),
		f.nomatch, f.nomatchN, pct(f.nomatch, f.nomatchN), f.sure, f.answerable, pct(f.sure, f.answerable),
		pct(f.ranked3, f.reqN), pct(f.ranked10, f.reqN))
}

// measure searches ix for every query of qs, as search_tools does with a
// limit of 5, and counts what the answers are worth; misses, if t is not
// nil, logs each miss.
func measure(ix *search.Index, qs realQueries, misses testing.TB) figures {
	var f figures
	miss := func(kind string, q realQuery, r search.Result) {
		if misses != nil {
			misses.Logf("%s miss: %q: want %v, got %v (confident %v)", kind, q.Q, q.Want, hitNames(r.Hits), r.Confident)
		}
	}
	for _, q := range qs.Model {
		r := ix.Search(bg, q.Q, 5, nil)
		f.modelN++
		f.answerable++
		f.sure += b2i(r.Confident)
		if wanted(r.Hits[:min(3, len(r.Hits))], q.Want) {
			f.model++
		} else {
			miss("model", q, r)
		}
	}
	for _, q := range qs.Request {
		r := ix.Search(bg, q.Q, 5, nil)
		ranked := ix.RankedN(q.Q, 10)
		f.reqN++
		f.answerable++
		f.sure += b2i(r.Confident)
		f.req3 += b2i(wanted(r.Hits[:min(3, len(r.Hits))], q.Want))
		if wanted(r.Hits, q.Want) {
			f.req5++
		} else {
			miss("request", q, r)
		}
		f.ranked3 += b2i(wanted(ranked[:min(3, len(ranked))], q.Want))
		f.ranked10 += b2i(wanted(ranked, q.Want))
	}
	for _, q := range qs.Nomatch {
		r := ix.Search(bg, q.Q, 5, nil)
		f.nomatchN++
		if !r.Confident {
			f.nomatch++
		} else {
			miss("no-match", q, r)
		}
	}
	return f
}

func hitNames(hits []search.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Tool.Name)
	}
	return out
}

// blindSet is a query file and the least shares it must keep: model-style
// queries and whole requests with a right tool in the first three, no-match
// requests answered not confident.
type blindSet struct {
	file                    string
	model, request, noMatch float64
}

// measureSets measures each set of dir on the catalog ts, as a subtest,
// and checks its floors. The misses of a held-out set are not logged:
// no change may be tuned on them.
func measureSets(t *testing.T, ts []*tools.Tool, dir string, sets []blindSet) {
	ix := search.New(ts)
	for _, set := range sets {
		t.Run(strings.TrimSuffix(set.file, ".json"), func(t *testing.T) {
			qs := loadQueryFile(t, dir+"/"+set.file)
			log := labelled(t, ts, qs, slices.Contains(gateHeldOut, strings.TrimSuffix(set.file, ".json")))
			f := measure(ix, qs, log)
			t.Logf("%s on %d tools: %s", set.file, len(ts), f)
			atLeast(t, []floor{
				{"model-style top-3", pct(f.model, f.modelN), 100 * set.model},
				{"whole requests top-3", pct(f.req3, f.reqN), 100 * set.request},
				{"no-match not confident", pct(f.nomatch, f.nomatchN), 100 * set.noMatch},
			})
		})
	}
}

// labelled fails t when a query of qs wants a tool ts lacks, and returns
// where to log the set's misses: t, or nil for a held-out set (no change
// may be tuned on its misses).
func labelled(t *testing.T, ts []*tools.Tool, qs realQueries, heldOut bool) testing.TB {
	t.Helper()
	names := map[string]bool{}
	for _, tool := range ts {
		names[tool.Name] = true
	}
	for _, q := range append(slices.Clone(qs.Model), qs.Request...) {
		for _, w := range q.Want {
			if !names[w] {
				t.Fatalf("query %q wants %s, not in the catalog", q.Q, w)
			}
		}
	}
	if heldOut {
		return nil
	}
	return t
}

// floor is a figure of a query set and the least it may be, in percent.
type floor struct {
	name     string
	got, min float64
}

// atLeast fails t for each figure under its floor.
func atLeast(t *testing.T, fs []floor) {
	t.Helper()
	for _, f := range fs {
		if f.got < f.min {
			t.Errorf("%s: %.1f%%, want at least %.0f%%", f.name, f.got, f.min)
		}
	}
}

// The real catalogs' query sets, each written blind by someone who had
// not seen the code, from the servers' tools only. Their floors are what
// the search reached when the confidence decision became the model's at
// 0.83, less one query each (never under the floors before), as
// regression guards; their first runs and the rounds they guided are in
// docs/measurements/search.md.

// TestRealCatalog: 363 real tools of 18 MCP servers published on npm
// (testdata/realcatalog, captured by tools/list).
func TestRealCatalog(t *testing.T) {
	measureSets(t, loadRealCatalog(t), "testdata/realcatalog", []blindSet{
		{"queries.json", 0.95, 0.87, 0.97},
		{"heldout.json", 0.86, 0.80, 0.96},
	})
}

// TestRealCatalogBlind: more sets of the first catalog.
func TestRealCatalogBlind(t *testing.T) {
	measureSets(t, loadRealCatalog(t), "testdata/realcatalog", []blindSet{
		{"blind3.json", 0.93, 0.84, 0.93},
		{"blind4.json", 0.94, 0.81, 0.90},
		{"blind5.json", 0.95, 0.86, 0.97},
		{"blind6.json", 0.91, 0.81, 0.95},
		{"blind7.json", 0.96, 0.91, 0.95},
		{"blind8.json", 0.90, 0.85, 0.95},
		{"blind9.json", 0.92, 0.78, 0.90},
		{"blind10.json", 0.97, 0.78, 0.94},
		{"blind11.json", 0.96, 0.90, 0.90},
		{"blind12.json", 0.97, 0.88, 0.82},
		{"blind13.json", 0.97, 0.78, 0.95},
		{"blind14.json", 0.95, 0.83, 0.92},
		{"blind15.json", 0.93, 0.81, 0.92},
		{"blind16.json", 0.93, 0.75, 0.92},
		{"blind17.json", 0.93, 0.83, 0.90},
		{"blind18.json", 0.95, 0.84, 0.87},
		{"blind19.json", 0.97, 0.78, 0.93},
		{"blind20.json", 0.97, 0.72, 0.84},
		{"blind21.json", 0.97, 0.87, 0.88},
		{"blind22.json", 0.95, 0.84, 0.93},
	})
}

// TestRealCatalog2: 213 real tools of nine other MCP servers
// (testdata/realcatalog2).
func TestRealCatalog2(t *testing.T) {
	measureSets(t, loadCatalogDir(t, "testdata/realcatalog2"), "testdata/realcatalog2", []blindSet{
		{"blindc2.json", 0.98, 0.94, 0.90},
		{"blindc2b.json", 0.95, 0.93, 0.92},
		{"blindc2c.json", 0.97, 0.96, 0.90},
		{"blindc2d.json", 0.97, 0.91, 0.95},
		{"blindc2e.json", 0.97, 0.95, 0.95},
		{"blindc2f.json", 0.97, 0.90, 0.87},
		{"blindc2g.json", 0.95, 0.88, 0.97},
		{"blindc2h.json", 0.95, 0.93, 0.95},
		{"blindc2i.json", 0.95, 0.93, 0.92},
		{"blindc2j.json", 0.97, 0.85, 0.88},
		{"blindc2k.json", 0.97, 0.85, 0.95},
	})
}

// TestRealCatalog3: 336 real tools of ten more servers (testdata/realcatalog3:
// Stripe, Xero, Trello, Linear, Git, Supabase, Datadog, Netlify, Google
// Sheets, WordPress).
func TestRealCatalog3(t *testing.T) {
	measureSets(t, loadCatalogDir(t, "testdata/realcatalog3"), "testdata/realcatalog3", []blindSet{
		{"blindc3a.json", 0.98, 0.84, 0.93},
		{"blindc3b.json", 0.93, 0.87, 0.82},
		{"blindc3c.json", 0.95, 0.88, 0.84},
		{"blindc3d.json", 0.97, 0.88, 0.93},
		{"blindc3e.json", 0.97, 0.91, 0.93},
		{"blindc3f.json", 0.95, 0.90, 0.91},
		{"blindc3g.json", 0.97, 0.76, 0.86},
		{"blindc3h.json", 0.93, 0.85, 0.93},
		{"blindc3i.json", 0.97, 0.80, 0.93},
		{"blindc3j.json", 0.97, 0.80, 0.95},
		{"blindc3k.json", 0.97, 0.81, 0.93},
		{"blindc3l.json", 0.97, 0.84, 0.97},
		{"blindc3m.json", 0.97, 0.68, 0.95},
		{"blindc3n.json", 0.97, 0.81, 0.91},
		{"blindc3o.json", 0.97, 0.74, 0.91},
		{"blindc3p.json", 0.97, 0.80, 0.93},
		{"blindc3q.json", 0.97, 0.87, 0.91},
	})
}

// TestRealCatalog4: 345 real tools of ten more servers (testdata/realcatalog4).
func TestRealCatalog4(t *testing.T) {
	measureSets(t, loadCatalogDir(t, "testdata/realcatalog4"), "testdata/realcatalog4", []blindSet{
		{"blindc4a.json", 0.93, 0.90, 0.93},
		{"blindc4b.json", 0.95, 0.75, 0.86},
		{"blindc4c.json", 0.95, 0.88, 0.93},
		{"blindc4d.json", 0.95, 0.78, 0.93},
		{"blindc4e.json", 0.97, 0.85, 0.88},
		{"blindc4f.json", 0.93, 0.77, 0.88},
		{"blindc4g.json", 0.95, 0.78, 0.84},
		{"blindc4h.json", 0.93, 0.71, 0.75},
		{"blindc4i.json", 0.93, 0.80, 0.84},
		{"blindc4j.json", 0.95, 0.84, 0.88},
		{"blindc4k.json", 0.95, 0.81, 0.82},
		{"blindc4l.json", 0.93, 0.71, 0.91},
		{"blindc4m.json", 0.97, 0.77, 0.91},
		{"blindc4n.json", 0.84, 0.71, 0.93},
	})
}

// TestRealCatalog5: 300 real tools of ten more servers (testdata/realcatalog5:
// Attio, DigitalOcean, Twilio, QuickBooks, Shopify, monday.com, OneDrive,
// Salesforce DX, Confluence, Figma).
func TestRealCatalog5(t *testing.T) {
	measureSets(t, loadCatalogDir(t, "testdata/realcatalog5"), "testdata/realcatalog5", []blindSet{
		{"blindc5a.json", 0.93, 0.80, 0.95},
		{"blindc5b.json", 0.95, 0.80, 0.86},
		{"blindc5c.json", 0.97, 0.84, 0.84},
		{"blindc5d.json", 0.91, 0.85, 0.88},
		{"blindc5e.json", 0.93, 0.81, 0.84},
		{"blindc5f.json", 0.86, 0.78, 0.84},
		{"blindc5g.json", 0.95, 0.81, 0.88},
		{"blindc5h.json", 0.95, 0.84, 0.86},
		{"blindc5i.json", 0.84, 0.82, 0.91},
		{"blindc5j.json", 0.93, 0.71, 0.82},
	})
}

// TestHeldOutSets measures search on all the held-out sets together (the
// sets no change is tuned on and the gate's model is not fitted to, see
// gateHeldOut): the figures the docs quote. Run with -v for them; it never
// logs a held-out query. Its floors are a little under what the ranking
// reaches, as guards.
func TestHeldOutSets(t *testing.T) {
	f := measureCatalogs(t, func(set string) bool { return slices.Contains(gateHeldOut, set) })
	t.Logf("%d held-out sets: %s", len(gateHeldOut), f)
	for _, c := range []struct {
		name     string
		got, min float64
	}{
		{"model-style top-3", pct(f.model, f.modelN), minHeldOutModel},
		{"whole requests top-3", pct(f.req3, f.reqN), minHeldOutRequest3},
		{"whole requests top-5", pct(f.req5, f.reqN), minHeldOutRequest5},
		{"no-match not confident", pct(f.nomatch, f.nomatchN), minHeldOutNomatch},
	} {
		if c.got < c.min {
			t.Errorf("held-out %s: %.1f%%, want at least %.0f%%", c.name, c.got, c.min)
		}
	}
}

// TestSeenSets measures search on all the other sets together: the ones
// changes are tuned on. Run with -v for its figures.
func TestSeenSets(t *testing.T) {
	if testing.Short() {
		t.Skip("searches every seen query of the real catalogs")
	}
	f := measureCatalogs(t, func(set string) bool { return !slices.Contains(gateHeldOut, set) })
	t.Logf("seen sets: %s", f)
}

// measureCatalogs measures the query sets of the real catalogs that pick
// accepts (by name, less .json), together.
func measureCatalogs(t *testing.T, pick func(set string) bool) figures {
	var all figures
	n := 0
	for _, dir := range gateCatalogs {
		var ix *search.Index
		for _, f := range querySets(t, dir) {
			set := strings.TrimSuffix(filepath.Base(f), ".json")
			if !pick(set) {
				continue
			}
			if ix == nil {
				ix = search.New(loadCatalogDir(t, dir))
			}
			n++
			all.add(measure(ix, loadQueryFile(t, f), nil))
		}
	}
	if n == 0 {
		t.Fatal("no query set picked")
	}
	return all
}

// The held-out sets' guards: a little under what the ranking reaches
// (96.9%, 81.8%, 87.0% and 91.5% since an answer that is not confident
// holds the closest five; 84.6% in the first five with the closest three).
const (
	minHeldOutModel    = 96
	minHeldOutRequest3 = 81
	minHeldOutRequest5 = 86
	minHeldOutNomatch  = 90
)

// wanted reports whether hits hold one of the tools a query wants.
func wanted(hits []search.Hit, want []string) bool {
	return slices.ContainsFunc(hits, func(h search.Hit) bool { return slices.Contains(want, h.Tool.Name) })
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BenchmarkSearchReal500: one search on 500 real tools (the real catalog,
// its first tools repeated under other names past 363). It also reports
// the process's CPU time per search (cpu-ns/op), the fairer figure on a
// loaded machine, where a search waits for a core.
func BenchmarkSearchReal500(b *testing.B) {
	ix := search.New(real500(b))
	qs := loadRealQueries(b)
	var all []string
	for _, q := range append(append(qs.Model, qs.Request...), qs.Nomatch...) {
		all = append(all, q.Q)
	}
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		sure(ix.Search(bg, all[i%len(all)], 10, nil))
	}
	if cpu > 0 {
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkBuildReal500: building the index of 500 real tools (what the
// first search after a catalog change may pay).
func BenchmarkBuildReal500(b *testing.B) {
	ts := real500(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		search.New(ts)
	}
}

func real500(b *testing.B) []*tools.Tool {
	ts := loadRealCatalog(b)
	out := slices.Clone(ts)
	for i := 0; len(out) < 500; i++ {
		c := *ts[i%len(ts)]
		c.Name += "_copy"
		out = append(out, &c)
	}
	return out
}
