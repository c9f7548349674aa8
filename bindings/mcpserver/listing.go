package mcpserver

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/tsdecl"
	"github.com/sandcall/sandcall/tools"
)

// DefaultListThreshold is Config.ListThreshold's default.
const DefaultListThreshold = 30

// Bounds of run_code's description in its two forms.
const (
	// maxListedSummary caps a tool's summary in the small form.
	maxListedSummary = 160
	// maxFamiliesBytes caps the list of families in the large form.
	maxFamiliesBytes = 1500
)

// overThreshold reports whether ts, less the discovery tools, are too many
// to list.
func (s *Server) overThreshold(ts []*tools.Tool) bool {
	if s.threshold <= 0 {
		return false
	}
	n := 0
	for _, t := range ts {
		if !bindings.IsDiscovery(t.Name) {
			n++
		}
	}
	return n > s.threshold
}

// writeBindings writes the callable tools into run_code's description:
// each with its signature and summary when they are few (no discovery
// round trip needed), else the tool families and how to find tools.
func (s *Server) writeBindings(b *strings.Builder, bound []*tools.Tool) {
	var listed []*tools.Tool
	canSearch, canDescribe := false, false
	for _, t := range bound {
		switch t.Name {
		case bindings.SearchToolsName:
			canSearch = true
		case bindings.DescribeToolsName:
			canDescribe = true
		default:
			listed = append(listed, t)
		}
	}
	if len(listed) == 0 {
		b.WriteString("\nNo tools are callable yet.\n\nExample: return input.length;")
		return
	}
	if !s.overThreshold(listed) {
		b.WriteString("\nCallable tools (TypeScript signatures; `args?` may be omitted):\n")
		for _, t := range listed {
			fmt.Fprintf(b, "- %s", tsdecl.Signature(t))
			if sum := clip(strings.TrimSpace(t.Summary()), maxListedSummary); sum != "" {
				fmt.Fprintf(b, " — %s", sum)
			}
			b.WriteString("\n")
		}
		if canDescribe {
			b.WriteString("For a tool's full declaration (property docs, result type, examples): describe_tools, or `await tools.$describe([\"name\"])`.\n")
		}
		b.WriteString("\nExample: ")
		b.WriteString(exampleProgram(listed))
		return
	}
	fmt.Fprintf(b, "\n%d tools are callable, too many to list here. Families (name prefix, count): %s.\n",
		len(listed), families(listed))
	switch {
	case canSearch && canDescribe:
		b.WriteString("Find tools with search_tools (in a program: `await tools.$search(\"what to do\", 5)` → {tools: [{name, summary, signature}], confident}), " +
			"read their declarations with describe_tools (`await tools.$describe([\"name\"])`), then call them as tools.<name>(args).\n")
	case canSearch:
		b.WriteString("Find tools with search_tools (in a program: `await tools.$search(\"what to do\", 5)`), then call them as tools.<name>(args).\n")
	default:
		b.WriteString("Call them by name as tools.<name>(args).\n")
	}
	b.WriteString("\nExample: ")
	if canSearch {
		fmt.Fprintf(b, "const found = await tools.$search(%q, 3); return found.tools;", exampleQuery(listed))
	} else {
		b.WriteString(exampleProgram(listed))
	}
}

// families lists every tool family — the name up to the first underscore,
// or the whole name when it has none — largest first, with counts:
// "github (13), crm (10), ping (1)". Past maxFamiliesBytes the rest are
// counted, never lumped in an unnamed "other".
func families(ts []*tools.Tool) string {
	count := map[string]int{}
	for _, t := range ts {
		count[family(t.Name)]++
	}
	type fam struct {
		name string
		n    int
	}
	var fs []fam
	for f, n := range count {
		fs = append(fs, fam{f, n})
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].n != fs[j].n {
			return fs[i].n > fs[j].n
		}
		return fs[i].name < fs[j].name
	})
	var b strings.Builder
	for i, f := range fs {
		item := fmt.Sprintf("%s (%d)", f.name, f.n)
		if b.Len()+len(item) > maxFamiliesBytes {
			rest := 0
			for _, g := range fs[i:] {
				rest += g.n
			}
			fmt.Fprintf(&b, ", and %d more families (%d tools)", len(fs)-i, rest)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(item)
	}
	return b.String()
}

// family is a tool name's family: the name up to the first underscore, or
// the whole name.
func family(name string) string {
	f, _, ok := strings.Cut(name, "_")
	if !ok || f == "" {
		return name
	}
	return f
}

// exampleQuery is the search of run_code's example, taken from the catalog
// at hand: the action words of a tool of its largest family (the name less
// the family prefix), so the example finds a real tool.
func exampleQuery(ts []*tools.Tool) string {
	count := map[string]int{}
	for _, t := range ts {
		count[family(t.Name)]++
	}
	var best *tools.Tool
	bestWords := 0
	for _, t := range ts {
		f := family(t.Name)
		rest := strings.Fields(strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(t.Name, f), "_"), "_", " "))
		words := min(len(rest), 3)
		if best == nil || count[f] > count[family(best.Name)] ||
			count[f] == count[family(best.Name)] && (words > bestWords || words == bestWords && t.Name < best.Name) {
			best, bestWords = t, words
		}
	}
	if best == nil {
		return "what to do"
	}
	f := family(best.Name)
	q := strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(best.Name, f), "_"), "_", " ")
	if q == "" {
		q = best.Name
	}
	if f != best.Name && bestWords < 3 {
		q += " " + f // the family says what the action acts on
	}
	return q
}
