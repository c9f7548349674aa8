package lint_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/lint"
)

// fixture is one tool definition of testdata/tools.json with the rules it
// must break, no more, no fewer.
type fixture struct {
	Why          string          `json:"why"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Examples     []tools.Example `json:"examples"`
	OutputBudget int             `json:"outputBudget"`
	Effects      tools.Effects   `json:"effects"`
	Declared     bool            `json:"declared"`
	Expect       []string        `json:"expect"`
}

func (f *fixture) tool(t *testing.T) *tools.Tool {
	t.Helper()
	tl := &tools.Tool{Name: f.Name, Description: f.Description, Examples: f.Examples, OutputBudget: f.OutputBudget,
		Effects: f.Effects, Pos: "tools.json:" + f.Name,
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }}
	tl.Effects.Declared = f.Declared
	var err error
	if f.InputSchema != nil {
		if tl.InputSchema, err = tools.ParseSchema(f.InputSchema); err != nil {
			t.Fatal(err)
		}
	}
	if f.OutputSchema != nil {
		if tl.OutputSchema, err = tools.ParseSchema(f.OutputSchema); err != nil {
			t.Fatal(err)
		}
	}
	return tl
}

func TestFixture(t *testing.T) {
	b, err := os.ReadFile("testdata/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var fs []fixture
	if err := json.Unmarshal(b, &fs); err != nil {
		t.Fatal(err)
	}
	if len(fs) < 5 {
		t.Fatalf("only %d fixtures", len(fs))
	}
	for _, f := range fs {
		t.Run(f.Name, func(t *testing.T) {
			got := lint.Lint(f.tool(t))
			var ids []string
			for _, g := range got {
				ids = append(ids, g.Rule)
				if g.Tool != f.Name || g.Pos != "tools.json:"+f.Name || g.Hint == "" || g.Message == "" {
					t.Errorf("finding %+v: want tool, pos, hint and message", g)
				}
			}
			if ids == nil {
				ids = []string{}
			}
			if !slices.Equal(ids, f.Expect) {
				t.Errorf("%s:\n got  %v\n want %v\n%s", f.Why, ids, f.Expect, findings(got))
			}
		})
	}
}

func findings(fs []lint.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + f.String() + "\n")
	}
	return b.String()
}

// TestRules: every rule has a unique ID, a level and a one-line hint.
func TestRules(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range lint.Rules {
		if seen[r.ID] || (r.Level != lint.Error && r.Level != lint.Warning) || r.Hint == "" || strings.Contains(r.Hint, "\n") {
			t.Errorf("rule %+v: want a unique ID, a level and a one-line hint", r)
		}
		seen[r.ID] = true
	}
}

func TestString(t *testing.T) {
	f := lint.Finding{Tool: "x", Rule: "effects", Level: lint.Warning, Message: "m", Pos: "a.sh:2"}
	if got := f.String(); got != "a.sh:2: warning: x: m [effects]" {
		t.Fatalf("String() = %q", got)
	}
}
