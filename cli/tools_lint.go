package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandcall/sandcall/tools/lint"
)

const toolsLintExamples = `  sandcall tools lint --demo
  sandcall tools lint --tools-dir examples/local-tools/.agents/tools --json

Checks every tool the catalog would serve (the discovery tools, the demo
tools with --demo, local scripts, and the tools of the upstream servers of
.mcp.json in the working directory) against the catalog standard: names,
descriptions (the question answered, when not to use, an example), closed
schemas and enums, output schema and budget, effects. Upstream tools are
not ours to fix: their findings are warnings. Local scripts are not held to
what a script header cannot declare (output schema, output budget, effects).

Output: one line per finding, "file:line: level: tool: message [rule]" (the
file:line when the definition has one), then the rule's fix as "  fix: ...".
Exit status: 1 when any finding is an error, 0 otherwise, 2 on usage errors.
`

// toolsLint is `sandcall tools lint`.
func toolsLint(e *env, args []string) int {
	fs := newFlagSet(e, "tools lint", "[--demo] [--tools-dir D] [--json]", toolsLintExamples)
	var c common
	c.catalogFlags(fs, "unused by lint; accepted so every catalog command takes the same flags")
	asJSON := fs.Bool("json", false, "print a JSON array of findings {tool, rule, level, message, hint, pos}")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErr(e, fs, "unexpected argument %q", pos[0])
	}
	c.logLevel = "error" // skipped files and servers are reported below
	b, set, closeAll, msg := snapshotBroker(e.stderr, &c, fs)
	if msg != "" {
		fmt.Fprintf(e.stderr, "sandcall tools lint: %s\n", msg)
		return exitFailure
	}
	defer closeAll()
	for _, f := range c.localFinds {
		if f.Reason != "" {
			fmt.Fprintf(e.stderr, "warning: %s skipped: %s (see 'sandcall tools check')\n", f.File, f.Reason)
		}
	}
	if set != nil {
		for _, w := range set.Warnings() {
			fmt.Fprintf(e.stderr, "warning: %s\n", strings.TrimSuffix(w, "; retrying in the background"))
		}
	}
	for _, n := range c.api.notes() {
		fmt.Fprintf(e.stderr, "warning: %s\n", n)
	}
	cat := b.Catalog()

	var all []lint.Finding
	for _, f := range c.api.findings() {
		f.Pos = relPos(f.Pos)
		all = append(all, f)
	}
	for _, t := range cat.List() {
		fs := lint.Lint(t)
		if t.Source == "local" {
			// A script header cannot declare these (yet): a finding the
			// script's author cannot fix is noise.
			fs = slices.DeleteFunc(fs, func(f lint.Finding) bool { return scriptCannot[f.Rule] })
		}
		if up := t.Source != "" && t.Source != "builtin" && t.Source != "local"; up {
			for i := range fs {
				if fs[i].Level == lint.Error {
					fs[i].Level = lint.Warning
					fs[i].Message += " (upstream tool of " + t.Source + ": shown as a warning)"
				}
			}
		}
		for i := range fs {
			fs[i].Pos = relPos(fs[i].Pos)
		}
		all = append(all, fs...)
	}
	errs := 0
	for _, f := range all {
		if f.Level == lint.Error {
			errs++
		}
	}
	if *asJSON {
		if all == nil {
			all = []lint.Finding{}
		}
		out, _ := json.MarshalIndent(all, "", "  ")
		fmt.Fprintln(e.stdout, string(out))
	} else {
		for _, f := range all {
			fmt.Fprintf(e.stdout, "%s\n  fix: %s\n", f, f.Hint)
		}
		fmt.Fprintf(e.stderr, "%d tools, %d errors, %d warnings\n", len(cat.List()), errs, len(all)-errs)
	}
	if errs > 0 {
		return exitFailure
	}
	return exitOK
}

// scriptCannot are the rules a local script's header has no way to meet.
var scriptCannot = map[string]bool{"output-schema": true, "output-budget": true, "effects": true}

// relPos shows a "file:line" position relative to the working directory
// when the file is under it.
func relPos(pos string) string {
	if pos == "" || !filepath.IsAbs(pos) {
		return pos
	}
	wd, err := os.Getwd()
	if err != nil {
		return pos
	}
	if rel, err := filepath.Rel(wd, pos); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return pos
}
