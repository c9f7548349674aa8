package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/tools"
)

const policyUsage = `Usage: sandcall policy check FILE...
       sandcall policy explain --tool T --caller direct|code [--args JSON] [--principal ID] [--roles a,b] [--policy F] [--demo]
                               [--read T1,T2] [--run-integrity trusted|untrusted] [--run-readers a,b]
       sandcall policy test FILE...

check    compile policy files; problems are printed as file:line:col: message (exit 1)
explain  decide one call and say which rule decided and why
test     run policy test files (cases: call -> expected decision); exit 1 on a mismatch

Examples:
  sandcall policy check examples/policies/payments.yaml
  sandcall policy explain --policy examples/policies/payments.yaml --tool send_payment --caller direct \
      --destructive --args '{"amount": 5000, "to": "ACME"}' --principal alice --roles finance
  sandcall policy explain --demo --tool get_expenses --caller direct
  sandcall policy explain --policy examples/policies/flow.yaml --demo --tool delete_message --caller code \
      --args '{"id": "M-1"}' --read list_messages
  sandcall policy test examples/policies/*_test.yaml
`

func cmdPolicy(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, policyUsage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(e.stdout, policyUsage)
		return exitOK
	case "check":
		return policyCheck(e, args[1:])
	case "explain":
		return policyExplain(e, args[1:])
	case "test":
		return policyTest(e, args[1:])
	}
	fmt.Fprintf(e.stderr, "sandcall policy: unknown subcommand %q\n\n%s", args[0], policyUsage)
	return exitUsage
}

// printProblems prints a load error: one file:line:col: message per line.
func printProblems(w io.Writer, err error) {
	var pe *policy.Error
	if errors.As(err, &pe) {
		for _, p := range pe.Problems {
			fmt.Fprintln(w, p.String())
		}
		return
	}
	fmt.Fprintln(w, err)
}

func policyCheck(e *env, args []string) int {
	fs := newFlagSet(e, "policy check", "[--demo] FILE...", "  sandcall policy check policy.yaml\n  sandcall policy check --demo policy.yaml   # also warn about rules naming a deprecated tool name\n")
	var cc common
	cc.catalogFlags(fs, "unused by check; accepted so every command takes the same flags")
	useDemo := &cc.demo // with --demo, a rule naming a deprecated alias of a demo tool is a warning
	files, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(files) == 0 {
		return usageErr(e, fs, "want at least one FILE")
	}
	status := exitOK
	for _, f := range files {
		c, err := policy.Load(f)
		if err != nil {
			printProblems(e.stderr, err)
			status = exitFailure
			continue
		}
		if *useDemo {
			cat, err := tools.NewCatalog(demo.Tools()...)
			if err == nil {
				for _, w := range bindings.AliasWarnings(f, c, cat) {
					fmt.Fprintln(e.stderr, w)
				}
			}
		}
		fmt.Fprintf(e.stdout, "%s: ok (%d rules)\n", f, c.NumRules())
	}
	return status
}

func policyTest(e *env, args []string) int {
	fs := newFlagSet(e, "policy test", "[--demo] [--tools-dir D] FILE...", "  sandcall policy test examples/policies/*_test.yaml\n")
	var cc common
	cc.catalogFlags(fs, "ignored: each test file names its policy")
	files, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(files) == 0 {
		return usageErr(e, fs, "want at least one FILE")
	}
	// A case that states no tool metadata takes the tool's from the
	// catalog serve would build, as the server decides with it.
	cc.policy = ""
	b, _, closeAll, msg := snapshotBroker(e.stderr, &cc, fs)
	if msg != "" {
		fmt.Fprintf(e.stderr, "sandcall policy test: %s\n", msg)
		return exitFailure
	}
	defer closeAll()
	status := exitOK
	for _, f := range files {
		s, err := policy.LoadSuite(f)
		if err != nil {
			printProblems(e.stderr, err)
			status = exitFailure
			continue
		}
		for i := range s.Cases {
			rq := &s.Cases[i].Request
			if t, _, ok := b.Catalog().Resolve(rq.Tool); ok && zeroMeta(rq.Meta) {
				rq.Meta = bindings.ToolMeta(t)
			}
		}
		if !policy.Report(e.stdout, s, s.Run()) {
			status = exitFailure
		}
	}
	return status
}

func policyExplain(e *env, args []string) int {
	fs := newFlagSet(e, "policy explain", "--tool T --caller direct|code [flags]", "  sandcall policy explain --demo --tool get_expenses --caller direct\n")
	tool := fs.String("tool", "", "the tool's name (required)")
	caller := fs.String("caller", "", "who calls: direct (the model through MCP) or code (a program) (required)")
	argsJSON := fs.String("args", "{}", "the call's arguments, a JSON object")
	principal := fs.String("principal", bindings.LocalPrincipal.ID, "the principal's id")
	roles := fs.String("roles", "", "the principal's roles, comma-separated")
	var cc common
	cc.catalogFlags(fs, "the policy file (default: the config file's, else the default policy)")
	var meta policy.ToolMeta
	fs.BoolVar(&meta.ReadOnly, "read-only", false, "the tool is read-only (for a tool not in the catalog)")
	fs.BoolVar(&meta.Destructive, "destructive", false, "the tool is destructive (for a tool not in the catalog)")
	fs.BoolVar(&meta.Idempotent, "idempotent", false, "the tool is idempotent (for a tool not in the catalog)")
	fs.BoolVar(&meta.OpenWorld, "open-world", false, "the tool reaches the open world (for a tool not in the catalog)")
	fs.StringVar(&meta.Source, "source", "", "where the tool comes from: builtin, local or an upstream server (for a tool not in the catalog)")
	calls := fs.Int("calls", 0, "calls of this tool already made in the run (for quotas)")
	var flow explainFlow
	flow.register(fs)
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErr(e, fs, "unexpected argument %q", pos[0])
	}
	if *tool == "" {
		return usageErr(e, fs, "--tool is required")
	}
	if *caller != policy.Direct && *caller != policy.Code {
		return usageErr(e, fs, "--caller must be direct or code")
	}
	if !json.Valid([]byte(*argsJSON)) || !strings.HasPrefix(strings.TrimSpace(*argsJSON), "{") {
		return usageErr(e, fs, "--args must be a JSON object")
	}
	if msg := flow.check(); msg != "" {
		return usageErr(e, fs, "%s", msg)
	}
	metaGiven := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "read-only", "destructive", "idempotent", "open-world", "source":
			metaGiven = true
		}
	})
	// The catalog serve would build (tools, upstream servers, policy), so
	// the tool's metadata is the one the server decides with.
	b, _, closeAll, msg := snapshotBroker(e.stderr, &cc, fs)
	if msg != "" {
		fmt.Fprintf(e.stderr, "sandcall policy explain: %s\n", msg)
		return exitFailure
	}
	defer closeAll()
	t, _, exists := b.Catalog().Resolve(*tool)
	if exists {
		meta = bindings.ToolMeta(t)
		*tool = t.Name
	}
	c := policy.Default()
	if cc.policy != "" {
		var err error
		if c, err = policy.Load(cc.policy); err != nil {
			printProblems(e.stderr, err)
			return exitFailure
		}
	}
	req := policy.Request{Caller: *caller, Tool: *tool, Meta: meta, Args: []byte(*argsJSON),
		Principal: policy.Principal{ID: *principal}}
	if *roles != "" {
		req.Principal.Roles = strings.Split(*roles, ",")
	}
	if *calls > 0 {
		req.Run.CallsByTool = map[string]int{*tool: *calls}
		req.Run.Calls = *calls
	}
	flow.apply(c, &req, func(name string) policy.ToolMeta {
		if t, _, ok := b.Catalog().Resolve(name); ok {
			return bindings.ToolMeta(t)
		}
		return policy.ToolMeta{}
	})
	d := c.Decide(&req)
	w := e.stdout
	fmt.Fprintf(w, "policy:    %s\n", c.Name())
	fmt.Fprintf(w, "tool:      %s%s\n", *tool, describeMeta(meta))
	if exists {
		fmt.Fprintf(w, "exists:    yes (metadata from the catalog: %d tools)\n", b.Catalog().Len())
	} else {
		var names []string
		for _, t := range b.Catalog().List() {
			names = append(names, t.Name)
		}
		line := fmt.Sprintf("no — no tool named %s in the catalog (%d tools: --demo, local scripts, the servers of .mcp.json); "+
			"a call would fail with E_TOOL_UNKNOWN", *tool, len(names))
		if close := bindings.Closest(*tool, names, 3); len(close) > 0 {
			line += "; did you mean " + strings.Join(close, ", ") + "?"
		}
		if metaGiven {
			line += "; deciding with the metadata flags given"
		}
		fmt.Fprintf(w, "exists:    %s\n", line)
	}
	fmt.Fprintf(w, "caller:    %s (principal %s)\n", *caller, *principal)
	fmt.Fprintf(w, "decision:  %s\n", map[bool]string{true: "allow", false: "deny"}[d.Allow])
	fmt.Fprintf(w, "rule:      %s\n", d.Rule)
	fmt.Fprintf(w, "reason:    %s\n", d.Reason)
	if d.Message != "" {
		fmt.Fprintf(w, "message:   %s\n", d.Message)
	}
	if d.Hint != "" {
		fmt.Fprintf(w, "hint:      %s\n", d.Hint)
	}
	if d.RequireApproval {
		fmt.Fprintln(w, "approval:  required (a person is asked through MCP elicitation before each call; no answer denies)")
	}
	if d.LogArgs {
		fmt.Fprintln(w, "log_args:  arguments may be logged in clear")
	}
	flow.print(w, c, &req, d)
	yesNo := map[bool]string{true: "yes", false: "no"}
	fmt.Fprintf(w, "exposed:   direct %s, code %s\n", yesNo[c.Exposes(*tool, meta, policy.Direct, req.Principal)],
		yesNo[c.Exposes(*tool, meta, policy.Code, req.Principal)])
	if !exists && !metaGiven {
		return exitFailure
	}
	return exitOK
}

func describeMeta(m policy.ToolMeta) string {
	var s []string
	for _, f := range []struct {
		on   bool
		name string
	}{{m.ReadOnly, "read-only"}, {m.Destructive, "destructive"}, {m.Idempotent, "idempotent"}, {m.OpenWorld, "open-world"}} {
		if f.on {
			s = append(s, f.name)
		}
	}
	if m.Source != "" {
		s = append(s, "source "+m.Source)
	}
	if len(m.AllowedCallers) > 0 {
		s = append(s, "declares callers "+strings.Join(m.AllowedCallers, ","))
	}
	if len(s) == 0 {
		return ""
	}
	return " (" + strings.Join(s, ", ") + ")"
}

// zeroMeta reports whether a policy test case states no tool metadata.
func zeroMeta(m policy.ToolMeta) bool {
	return !m.ReadOnly && !m.Destructive && !m.Idempotent && !m.OpenWorld && m.Source == "" && len(m.AllowedCallers) == 0
}
