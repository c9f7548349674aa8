package cli

import (
	"fmt"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// TestPackageDocListsCommands: the package doc lists every command of the
// command table, with its summary, and no other.
func TestPackageDocListsCommands(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for _, l := range strings.Split(f.Doc.Text(), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "sandcall ") {
			doc = append(doc, l)
		}
	}
	var want []string
	for _, c := range commands() {
		want = append(want, fmt.Sprintf("sandcall %-8s %s", c.name, c.summary))
	}
	if !slices.Equal(doc, want) {
		t.Errorf("the package doc of main.go lists:\n\t%s\nwant (from commands()):\n\t%s",
			strings.Join(doc, "\n\t"), strings.Join(want, "\n\t"))
	}
}
