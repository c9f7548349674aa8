package bindings

import (
	"fmt"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/tools"
)

// AliasWarnings says which rules of the policy c (read from file) name a
// deprecated alias of a tool in cat: rules see a tool's current name, so
// such a rule silently never matches. Each warning is
// "file:line:col: warning: …" naming the name to write instead.
func AliasWarnings(file string, c *policy.Checker, cat *tools.Catalog) []string {
	if c == nil || cat == nil {
		return nil
	}
	var out []string
	for _, n := range c.NamedTools() {
		t, alias, ok := cat.Resolve(n.Tool)
		if !ok || alias.Name == "" {
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d:%d: warning: rule %q names %q, a deprecated name of %s: rules see the current name, so it never matches that tool; write %s",
			file, n.Line, n.Col, n.Rule, n.Tool, t.Name, t.Name))
	}
	return out
}
