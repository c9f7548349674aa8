package search_test

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/tools/search"
)

var dumpFile = flag.String("dump", "", "TestDumpRankings writes every labelled query's ranking to this file")

// TestDumpRankings writes, for every query of every labelled set (the
// fixture's, the five real catalogs' and the small catalogs'), the ten best tools before the
// confidence decision with their scores and confidences, and what Search
// answers: a refactor of the pipeline must leave the file unchanged
// (go test -run TestDumpRankings -args -dump=before.txt, change, dump
// again, diff). It runs only with -dump.
func TestDumpRankings(t *testing.T) {
	if *dumpFile == "" {
		t.Skip("run with -args -dump=FILE")
	}
	f, err := os.Create(*dumpFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	defer w.Flush()
	dump := func(ix *search.Index, set, q string) {
		fmt.Fprintf(w, "%s\t%q\n", set, q)
		for _, h := range ix.RankedN(q, 10) {
			fmt.Fprintf(w, "\tranked %s %.10g %.10g\n", h.Tool.Name, h.Score, h.Confidence)
		}
		res := dumpSearch(ix, q, 10)
		fmt.Fprintf(w, "\tanswer %s\n", res)
	}
	fix := search.New(loadFixture(t))
	for _, file := range []string{"testdata/queries.txt", "testdata/utterances.txt"} {
		for _, q := range loadQueries(t, file) {
			dump(fix, file, q.text)
		}
	}
	for _, name := range smallSets {
		s, ts := loadSmallSet(t, name)
		ix := search.New(ts)
		for _, sec := range [][]realQuery{s.Model, s.Request, s.Nomatch} {
			for _, q := range sec {
				dump(ix, name, q.Q)
			}
		}
		for _, q := range s.Family {
			dump(ix, name, q.Q)
		}
	}
	for _, dir := range gateCatalogs {
		ix := search.New(loadCatalogDir(t, dir))
		for _, file := range querySets(t, dir) {
			qs := loadQueryFile(t, file)
			for _, sec := range [][]realQuery{qs.Model, qs.Request, qs.Nomatch} {
				for _, q := range sec {
					dump(ix, file, q.Q)
				}
			}
		}
	}
}

// dumpSearch is what Search answers for q, as one line.
func dumpSearch(ix *search.Index, q string, limit int) string {
	r := ix.Search(bg, q, limit, nil)
	var b strings.Builder
	fmt.Fprintf(&b, "confident=%v total=%d families=%d", r.Confident, r.Total, len(r.Families))
	for _, h := range r.Hits {
		fmt.Fprintf(&b, " %s:%.10g:%.10g", h.Tool.Name, h.Score, h.Confidence)
	}
	return b.String()
}
