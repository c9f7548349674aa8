package policy

import (
	"path"
	"testing"
)

// TestGlobAgreesWithPathMatch: the fast paths answer as path.Match does.
func TestGlobAgreesWithPathMatch(t *testing.T) {
	pats := []string{"*", "github_*", "*_read", "a*b", "a?c", "[ab]*", "g*/x", "", "exact", "*x*", "a\\*"}
	names := []string{"", "github_", "github_issues", "x_read", "_read", "abc", "ab", "a/b", "github_/x", "exact", "bx", "a*", "xx"}
	for _, p := range pats {
		g := compileGlob(p)
		for _, n := range names {
			want, _ := path.Match(p, n)
			if got := g.match(n); got != want {
				t.Errorf("%q ~ %q: %t, path.Match %t", p, n, got, want)
			}
		}
	}
}
