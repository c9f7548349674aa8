package search_test

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

// smallSubsets cuts each real catalog into small catalogs of a few whole
// servers (smallMin to smallMax tools, servers in name order, a server of
// more than smallMax tools left out): what a search over a few servers
// meets.
func smallSubsets(t testing.TB, dir string) [][]*tools.Tool {
	bySrc := map[string][]*tools.Tool{}
	for _, tool := range loadCatalogDir(t, dir) {
		bySrc[tool.Source] = append(bySrc[tool.Source], tool)
	}
	var srcs []string
	for s := range bySrc {
		srcs = append(srcs, s)
	}
	sort.Strings(srcs)
	var out [][]*tools.Tool
	var cur []*tools.Tool
	for _, s := range srcs {
		if len(bySrc[s]) > smallMax {
			continue
		}
		if len(cur)+len(bySrc[s]) > smallMax {
			if len(cur) >= smallMin {
				out = append(out, cur)
			}
			cur = nil
		}
		cur = append(cur, bySrc[s]...)
	}
	if len(cur) >= smallMin {
		out = append(out, cur)
	}
	return out
}

const (
	smallMin = 20
	smallMax = 60
)

// subsetFigures measures the seen (or, with held, the held-out) sets of
// every real catalog on its small subsets: a query all of whose tools are
// in a subset is answerable there; one none of whose tools is, or a
// no-match request, is a no-match request there.
func subsetFigures(t *testing.T, held bool) (f, orig figures, catalogs, tools int) {
	for _, dir := range gateCatalogs {
		var sets []realQueries
		for _, file := range querySets(t, dir) {
			set := strings.TrimSuffix(filepath.Base(file), ".json")
			if slices.Contains(gateHeldOut, set) == held {
				sets = append(sets, loadQueryFile(t, file))
			}
		}
		for _, sub := range smallSubsets(t, dir) {
			catalogs++
			tools += len(sub)
			in := map[string]bool{}
			for _, tool := range sub {
				in[tool.Name] = true
			}
			var qs, qo realQueries
			place := func(q realQuery, answerable *[]realQuery) {
				n := 0
				for _, w := range q.Want {
					if in[w] {
						n++
					}
				}
				switch {
				case n == 0:
					qs.Nomatch = append(qs.Nomatch, q)
				case n == len(q.Want):
					*answerable = append(*answerable, q)
				}
			}
			for _, s := range sets {
				for _, q := range s.Model {
					place(q, &qs.Model)
				}
				for _, q := range s.Request {
					place(q, &qs.Request)
				}
				qo.Nomatch = append(qo.Nomatch, s.Nomatch...)
			}
			ix := search.New(sub)
			f.add(measure(ix, qs, nil))
			orig.add(measure(ix, qo, nil))
		}
	}
	return f, orig, catalogs, tools
}

// TestSmallSubsets measures search on small catalogs cut from the real
// ones (see smallSubsets) with the seen sets' queries. Run with -v.
func TestSmallSubsets(t *testing.T) {
	if testing.Short() {
		t.Skip("searches every seen query on every subset")
	}
	f, o, n, nt := subsetFigures(t, false)
	t.Logf("%d small catalogs (%d tools): %s; the sets' own no-match requests not confident %d/%d (%.1f%%)", n, nt, f, o.nomatch, o.nomatchN, pct(o.nomatch, o.nomatchN))
}
