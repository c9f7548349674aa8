package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/sandcall/sandcall/bindings/audit"
	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
)

const tokenUsage = `Usage: sandcall token hash < TOKEN

Reads a bearer token from stdin (the first line) and prints its SHA-256 in
hex, the form auth.tokens[].sha256 takes in sandcall.yaml, so tokens are
never written in clear.

Example:
  head -c 32 /dev/urandom | base64 | tee token.txt | sandcall token hash
`

func cmdToken(_ context.Context, e *env, args []string) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(e.stdout, tokenUsage)
		return exitOK
	}
	if len(args) != 1 || args[0] != "hash" {
		fmt.Fprint(e.stderr, tokenUsage)
		return exitUsage
	}
	line, err := bufio.NewReader(io.LimitReader(e.stdin, 64<<10)).ReadString('\n')
	if err != nil && err != io.EOF {
		fmt.Fprintf(e.stderr, "sandcall token hash: %v\n", err)
		return exitFailure
	}
	tok := strings.TrimRight(line, "\r\n")
	if strings.TrimSpace(tok) == "" {
		fmt.Fprintln(e.stderr, "sandcall token hash: no token on stdin")
		return exitUsage
	}
	fmt.Fprintln(e.stdout, bearer.HashToken(tok))
	return exitOK
}

const auditUsage = `Usage: sandcall audit stats [--json] FILE

Reads an audit file (JSON Lines, from --audit) and prints, per tool, the
calls that succeeded, failed and were denied with their p50 and p95
latency, and the runs by error code.
`

func cmdAudit(_ context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] != "stats" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(e.stdout, auditUsage)
			return exitOK
		}
		fmt.Fprint(e.stderr, auditUsage)
		return exitUsage
	}
	fs := newFlagSet(e, "audit stats", "[--json] FILE", "  sandcall audit stats audit.jsonl\n")
	asJSON := fs.Bool("json", false, "print the figures as JSON")
	pos, code, ok := parseFlags(e, fs, args[1:])
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageErr(e, fs, "want exactly one FILE")
	}
	f, err := os.Open(pos[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall audit stats: %v\n", err)
		return exitFailure
	}
	defer f.Close()
	st, err := audit.ReadStats(f)
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall audit stats: %s: %v\n", pos[0], err)
		return exitFailure
	}
	if *asJSON {
		b, _ := json.Marshal(st)
		fmt.Fprintf(e.stdout, "%s\n", b)
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tok\tfailed\tdenied\tp50 ms\tp95 ms\t")
	for _, t := range st.Tools {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.3f\t%.3f\t\n", t.Tool, t.OK, t.Failed, t.Denied, t.P50MS, t.P95MS)
	}
	tw.Flush()
	codes := make([]string, 0, len(st.Runs))
	for c := range st.Runs {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	fmt.Fprint(e.stdout, "\nruns:")
	if len(codes) == 0 {
		fmt.Fprint(e.stdout, " none")
	}
	for _, c := range codes {
		fmt.Fprintf(e.stdout, " %s=%d", c, st.Runs[c])
	}
	fmt.Fprintln(e.stdout)
	return exitOK
}
