package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/plan"
)

const planExamples = `  # what the expense demo's program will call, before it runs
  sandcall plan examples/expense/program.js

  # as JSON: {"tools": [{"name", "line"}], "dynamic": N}
  sandcall plan --json examples/market/program.js

  # would this policy's plan rules let it run? (exit 1 if not)
  sandcall plan --demo-inbox clean --policy examples/policies/plans.yaml examples/inbox/program.js

The plan lists every tool the program names (tools.x(…), tools["x"],
tools.call("x", …)) at the first line naming it, and counts the names it
computes at run time (dynamic). A WebAssembly module (.wasm, or --lang wasm)
lists its imports and the names of the catalog's tools its data holds: the
catalog is assembled as for 'tools list' (--demo, --tools-dir, the project's
servers and programs). With --policy (or a policy in the config file), the
plan is checked against the policy's plan rules, through the programs it
names, as serve checks it: a refused program exits 1, naming the rule.
`

func cmdPlan(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "plan", "[--json] [--lang js|ts|wasm] [--policy F] [--demo] FILE|-", planExamples)
	var c common
	c.catalogFlags(fs, "check the plan against this policy's plan rules (default: the config file's policy, if any)")
	asJSON := fs.Bool("json", false, `print {"tools": [{"name", "line"}], "dynamic": N} (and "refused" when the policy refuses it)`)
	lang := fs.String("lang", "", "language of FILE: js, ts or wasm (default: from its extension, else js)")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageErr(e, fs, "want exactly one FILE, or - for stdin")
	}
	src, err := readProgram(e, pos[0])
	if err != nil {
		return usageErr(e, fs, "%v", err)
	}
	var prog sandbox.Program
	l := *lang
	if l == "" {
		switch {
		case strings.HasSuffix(pos[0], ".ts"):
			l = "ts"
		case strings.HasSuffix(pos[0], ".wasm"):
			l = "wasm"
		default:
			l = "js"
		}
	}
	switch l {
	case "js", "javascript":
		prog = sandbox.Program{Language: sandbox.JavaScript, Source: string(src)}
	case "ts", "typescript":
		prog = sandbox.Program{Language: sandbox.TypeScript, Source: string(src)}
	case "wasm":
		prog = sandbox.Program{Language: sandbox.WASM, Module: src}
	default:
		return usageErr(e, fs, "unknown --lang %q: want js, ts or wasm", l)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var pl *sandbox.Plan
	var refused *sandbox.Error
	if msg := c.loadConfig(fs); msg != "" {
		fmt.Fprintf(e.stderr, "sandcall plan: %s\n", msg)
		return exitUsage
	}
	if prog.Language == sandbox.WASM || c.policy != "" || c.demo || c.demoInbox != "" || set["tools-dir"] {
		// The catalog as serve assembles it: the names a module's data
		// may hold, and the programs a plan's tools may be.
		c.logLevel = "error"
		b, _, closeAll, msg := snapshotBroker(e.stderr, &c, fs)
		if msg != "" {
			fmt.Fprintf(e.stderr, "sandcall plan: %s\n", msg)
			return exitFailure
		}
		defer closeAll()
		pl, refused = b.CheckPlan(ctx, prog, principalOf(c.cfg))
		if pl == nil && refused == nil {
			_, perr := plan.Of(prog, nil)
			refused = perr
		}
	} else {
		p, perr := plan.Of(prog, nil)
		if perr != nil {
			refused = perr
		} else {
			pl = &p
		}
	}
	if pl == nil { // it does not parse
		printError(e.stderr, refused)
		return exitFailure
	}
	if *asJSON {
		out := struct {
			*sandbox.Plan
			Refused *sandbox.Error `json:"refused,omitempty"`
		}{pl, refused}
		b, _ := json.Marshal(out)
		fmt.Fprintf(e.stdout, "%s\n", b)
	} else {
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tLINE")
		for _, t := range pl.Tools {
			line := "-"
			if t.Line > 0 {
				line = fmt.Sprint(t.Line)
			}
			fmt.Fprintf(tw, "%s\t%s\n", t.Name, line)
		}
		_ = tw.Flush()
		fmt.Fprintf(e.stdout, "dynamic: %d (names computed at run time)\n", pl.Dynamic)
		for _, imp := range pl.Imports {
			fmt.Fprintf(e.stdout, "import: %s\n", imp)
		}
	}
	if refused != nil {
		fmt.Fprintf(e.stderr, "refused by rule %s: %s\n", refused.Rule, refused.Message)
		if refused.Hint != "" {
			fmt.Fprintf(e.stderr, "hint: %s\n", refused.Hint)
		}
		return exitFailure
	}
	return exitOK
}
