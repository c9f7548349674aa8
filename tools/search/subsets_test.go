package search_test

import (
	"flag"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/internal/testenv"
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

// subset is a small catalog cut from a real one (see smallSubsets) and
// the queries of the real one's sets labelled for it: a model-style query
// or whole request all of whose tools are in it is answerable there; one
// none of whose tools is, or a no-match request, is a no-match request
// there (the former derived: asked of a server the catalog lacks).
type subset struct {
	cat     string
	tools   []*tools.Tool
	qs      realQueries
	derived []realQuery
}

// subsets are the small catalogs cut from every real catalog, with the
// seen sets' queries (or, with held, the held-out sets').
func subsets(t testing.TB, held bool) []subset {
	var out []subset
	for _, dir := range gateCatalogs {
		var sets []realQueries
		for _, file := range querySets(t, dir) {
			set := strings.TrimSuffix(filepath.Base(file), ".json")
			if slices.Contains(gateHeldOut, set) == held {
				sets = append(sets, loadQueryFile(t, file))
			}
		}
		for _, sub := range smallSubsets(t, dir) {
			in := map[string]bool{}
			for _, tool := range sub {
				in[tool.Name] = true
			}
			s := subset{cat: dir, tools: sub}
			place := func(q realQuery, answerable *[]realQuery) {
				n := 0
				for _, w := range q.Want {
					if in[w] {
						n++
					}
				}
				switch {
				case n == 0:
					s.derived = append(s.derived, q)
				case n == len(q.Want):
					*answerable = append(*answerable, q)
				}
			}
			for _, qs := range sets {
				for _, q := range qs.Model {
					place(q, &s.qs.Model)
				}
				for _, q := range qs.Request {
					place(q, &s.qs.Request)
				}
				s.qs.Nomatch = append(s.qs.Nomatch, qs.Nomatch...)
			}
			out = append(out, s)
		}
	}
	return out
}

// subsetFigures measures the small subsets: their answerable queries and
// own no-match requests (f), and their derived no-match requests (d).
func subsetFigures(t *testing.T, held bool) (f, d figures, catalogs, tools int) {
	for _, s := range subsets(t, held) {
		catalogs++
		tools += len(s.tools)
		ix := search.New(s.tools)
		f.add(measure(ix, s.qs, nil))
		d.add(measure(ix, realQueries{Nomatch: s.derived}, nil))
	}
	return f, d, catalogs, tools
}

// TestSmallSubsets measures search on small catalogs cut from the real
// ones (see subsets) with the seen sets' queries, and, with -heldout, the
// held-out ones'. Run with -v.
func TestSmallSubsets(t *testing.T) {
	if testing.Short() || testenv.Race {
		t.Skip("a measurement: searches every seen query on every subset")
	}
	f, d, n, nt := subsetFigures(t, *heldOutSubsets)
	t.Logf("%d small catalogs (%d tools), held out %v: %s; no-match requests asked of servers they lack not confident %d/%d (%.1f%%)",
		n, nt, *heldOutSubsets, f, d.nomatch, d.nomatchN, pct(d.nomatch, d.nomatchN))
}

var heldOutSubsets = flag.Bool("heldout", false, "TestSmallSubsets measures the held-out sets")
