package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
)

// toolsSearch is `sandcall tools search QUERY`: search_tools, as the model
// would call it directly.
func toolsSearch(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "tools search", "[--demo] [--tools-dir D] [--policy F] [--limit N] [--json] QUERY",
		"  sandcall tools search --demo \"travel budget of a level\"\n")
	var c common
	c.catalogFlags(fs, "show only what this policy lets the model call (default: the config file's, else the default policy)")
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
	b, _, closeAll, msg := snapshotBroker(e.stderr, &c, fs)
	if msg != "" {
		fmt.Fprintf(e.stderr, "sandcall tools search: %s\n", msg)
		return exitFailure
	}
	defer closeAll()
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
		fmt.Fprintf(e.stdout, "%s  [%s]\n    %s\n    %s\n    call %s\n", t.Name, strings.Join(t.Callers, ","), t.Summary, t.Signature, t.Call)
	}
	if !res.Confident {
		var fams []string
		for _, f := range res.Families {
			fams = append(fams, fmt.Sprintf("%s (%d)", f.Name, f.Tools))
		}
		fmt.Fprintf(e.stderr, "not confident: no tool fits well enough to be sure; the %d closest shown (searched %d)\n", res.Shown, res.Searched)
		if len(fams) > 0 {
			fmt.Fprintf(e.stderr, "families: %s\n", strings.Join(fams, ", "))
		}
		if res.Hint != "" {
			fmt.Fprintln(e.stderr, res.Hint)
		}
		return exitOK
	}
	fmt.Fprintf(e.stderr, "%d of %d matching tools shown (searched %d)\n", res.Shown, res.Total, res.Searched)
	return exitOK
}

// toolsDescribe is `sandcall tools describe NAME...`: describe_tools' TypeScript
// declarations.
func toolsDescribe(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "tools describe", "[--demo] [--tools-dir D] [--policy F] [--json] NAME...",
		"  sandcall tools describe --demo get_expenses get_team_members\n")
	var c common
	c.catalogFlags(fs, "describe only what this policy lets the model call (default: the config file's, else the default policy)")
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
	b, _, closeAll, msg := snapshotBroker(e.stderr, &c, fs)
	if msg != "" {
		fmt.Fprintf(e.stderr, "sandcall tools describe: %s\n", msg)
		return exitFailure
	}
	defer closeAll()
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
