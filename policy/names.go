package policy

import "sort"

// NamedTool is one exact tool name a rule lists under tools (globs are not
// names), with where the rule starts.
type NamedTool struct {
	Rule      string // the rule's name, or rules[i]
	Tool      string
	Line, Col int
}

// NamedTools returns the exact tool names every rule lists, in rule order
// and then by name. A caller that knows the catalog can check them: a name
// that is a deprecated alias never matches (rules see a tool's current
// name), and `sandcall policy check` warns about it.
func (c *Checker) NamedTools() []NamedTool {
	var out []NamedTool
	for _, r := range c.rules {
		names := make([]string, 0, len(r.exact))
		for n := range r.exact {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			out = append(out, NamedTool{Rule: r.id, Tool: n, Line: r.pos.line, Col: r.pos.col})
		}
	}
	return out
}
