package search_test

import (
	"testing"
	"github.com/sandcall/sandcall/tools/search"
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
