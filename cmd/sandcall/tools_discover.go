package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/local"
)

// discoveryBroker is a broker over the tools the flags enable (the demo
// tools with --demo, the local script tools) with the discovery tools and
// the policy at path (the default policy if empty), for `tools search` and
// `tools describe`. Upstream servers are not attached: these commands read
// the local catalog without starting anything.
func discoveryBroker(e *env, demoTools bool, dir, policyPath string) (*bindings.Broker, bool) {
	var ts []*tools.Tool
	if demoTools {
		ts = demo.Tools()
	}
	cat, err := tools.NewCatalog(ts...)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return nil, false
	}
	if d, ok := localDir(dir); ok {
		set, _ := local.Load(local.Config{Dir: d, Logger: slog.New(slog.DiscardHandler)})
		set.AddTo(cat)
	}
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return nil, false
	}
	if policyPath != "" {
		if _, err := bindings.LoadPolicyFile(policyPath, b, nil); err != nil {
			fmt.Fprintln(e.stderr, err)
			return nil, false
		}
	}
	if err := bindings.AddDiscovery(b); err != nil {
		fmt.Fprintln(e.stderr, err)
		return nil, false
	}
	return b, true
}

// toolsSearch is `sandcall tools search QUERY`: search_tools, as the model
// would call it directly.
func toolsSearch(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "tools search", "[--demo] [--tools-dir D] [--policy F] [--limit N] [--json] QUERY",
		"  sandcall tools search --demo \"travel budget of a level\"\n")
	demoFlag := fs.Bool("demo", false, "include the embedded demo toolsets")
	dir := fs.String("tools-dir", "", "local tools directory (default: "+local.DefaultDir+" in the working directory, if present)")
	pol := fs.String("policy", "", "show only what this policy lets the model call (default: the default policy)")
	limit := fs.Int("limit", bindings.DefaultSearchLimit, fmt.Sprintf("most tools to show (1 to %d)", bindings.MaxSearchLimit))
	asJSON := fs.Bool("json", false, "print search_tools' JSON answer")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		return usageErr(e, fs, "missing QUERY")
	}
	if *limit < 1 || *limit > bindings.MaxSearchLimit {
		return usageErr(e, fs, "--limit must be from 1 to %d", bindings.MaxSearchLimit)
	}
	b, ok := discoveryBroker(e, *demoFlag, *dir, *pol)
	if !ok {
		return exitFailure
	}
	in, _ := json.Marshal(map[string]any{"query": strings.Join(pos, " "), "limit": *limit})
	raw, err := b.CallDirect(ctx, bindings.LocalPrincipal, bindings.SearchToolsName, in)
	if err != nil {
		return printToolError(e, "tools search", err)
	}
	if *asJSON {
		return printJSON(e, raw)
	}
	var res bindings.SearchResult
	if err := json.Unmarshal(raw, &res); err != nil {
		fmt.Fprintln(e.stderr, "sandcall tools search:", err)
		return exitInternal
	}
	if res.Shown == 0 {
		fmt.Fprintf(e.stderr, "no tool matches (searched %d). %s\n", res.Searched, res.Hint)
		return exitOK
	}
	for _, t := range res.Tools {
		fmt.Fprintf(e.stdout, "%s  [%s]\n    %s\n    %s\n", t.Name, strings.Join(t.Callers, ","), t.Summary, t.Signature)
	}
	fmt.Fprintf(e.stderr, "%d of %d matching tools shown (searched %d)\n", res.Shown, res.Total, res.Searched)
	return exitOK
}

// toolsDescribe is `sandcall tools describe NAME...`: describe_tools' TypeScript
// declarations.
func toolsDescribe(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "tools describe", "[--demo] [--tools-dir D] [--policy F] [--json] NAME...",
		"  sandcall tools describe --demo get_expenses get_team_members\n")
	demoFlag := fs.Bool("demo", false, "include the embedded demo toolsets")
	dir := fs.String("tools-dir", "", "local tools directory (default: "+local.DefaultDir+" in the working directory, if present)")
	pol := fs.String("policy", "", "describe only what this policy lets the model call (default: the default policy)")
	asJSON := fs.Bool("json", false, "print describe_tools' JSON answer")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		return usageErr(e, fs, "missing NAME")
	}
	if len(pos) > bindings.MaxDescribeNames {
		return usageErr(e, fs, "at most %d names at once", bindings.MaxDescribeNames)
	}
	b, ok := discoveryBroker(e, *demoFlag, *dir, *pol)
	if !ok {
		return exitFailure
	}
	in, _ := json.Marshal(map[string]any{"names": pos})
	raw, err := b.CallDirect(ctx, bindings.LocalPrincipal, bindings.DescribeToolsName, in)
	if err != nil {
		return printToolError(e, "tools describe", err)
	}
	if *asJSON {
		return printJSON(e, raw)
	}
	var res bindings.DescribeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		fmt.Fprintln(e.stderr, "sandcall tools describe:", err)
		return exitInternal
	}
	fmt.Fprintln(e.stdout, res.Declarations)
	if len(res.Unknown) > 0 || len(res.Omitted) > 0 {
		if len(res.Unknown) > 0 {
			fmt.Fprintf(e.stderr, "unknown: %s\n", strings.Join(res.Unknown, ", "))
		}
		if len(res.Omitted) > 0 {
			fmt.Fprintf(e.stderr, "omitted (too large for one answer): %s\n", strings.Join(res.Omitted, ", "))
		}
		return exitFailure
	}
	return exitOK
}

func printToolError(e *env, cmd string, err error) int {
	se := sandbox.AsError(err, sandbox.EToolFailed)
	fmt.Fprintf(e.stderr, "sandcall %s: %s: %s\n", cmd, se.Code, se.Message)
	if se.Hint != "" {
		fmt.Fprintf(e.stderr, "hint: %s\n", se.Hint)
	}
	if se.Code == sandbox.EToolArgs {
		return exitUsage
	}
	return exitFailure
}

func printJSON(e *env, raw json.RawMessage) int {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		fmt.Fprintln(e.stdout, string(raw))
		return exitOK
	}
	fmt.Fprintln(e.stdout, buf.String())
	return exitOK
}
