package search_test

import (
	"github.com/sandcall/sandcall/tools/search"
	"testing"
)

// TestKnownWordIsNoTypo: a query's word that is an English word the
// catalog lacks is not read as a misspelling of one of its words: "send"
// is no typo of spend, so sandcall's demo catalog, whose expenses tool
// says what a team member spent, sends no e-mail. A word no dictionary
// knows still is (competitrs → competitors).
func TestKnownWordIsNoTypo(t *testing.T) {
	_, ts := loadSmallSet(t, "demo")
	ix := search.New(ts)
	if r := ix.Search(bg, "send an email to the team", 5, nil); r.Confident {
		t.Errorf("send an email: %v, confident", hitNames(r.Hits))
	}
	if hits, _ := hitsOf(ix.Search(bg, "competitrs of a company", 5, nil)); len(hits) == 0 || hits[0].Tool.Name != "search_competitors" {
		t.Errorf("competitrs: %v", hitNames(hits))
	}
}

// TestStopWordFamily: a family whose name is a stop word (the MCP test
// server "everything") is found by its name alone, which has no other
// word to search.
func TestStopWordFamily(t *testing.T) {
	_, ts := loadSmallSet(t, "files")
	ix := search.New(ts)
	for _, q := range []string{"everything", "Everything?"} {
		r := ix.Search(bg, q, 0, nil)
		if !r.Confident || len(r.Hits) != 13 || r.Hits[0].Tool.Source != "everything" || r.Hits[12].Tool.Source != "everything" {
			t.Errorf("%q: %v (confident %v), want the everything server's 13 tools", q, hitNames(r.Hits), r.Confident)
		}
	}
	if r := ix.Search(bg, "the", 5, nil); len(r.Hits) != 0 || r.Confident {
		t.Errorf("the: %v (confident %v)", hitNames(r.Hits), r.Confident)
	}
}
