package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

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

// toolStats are one tool's figures in `audit stats`.
type toolStats struct {
	Tool   string  `json:"tool"`
	OK     int     `json:"ok"`
	Failed int     `json:"failed"`
	Denied int     `json:"denied"`
	P50MS  float64 `json:"p50_ms"`
	P95MS  float64 `json:"p95_ms"`
	durs   []float64
}

type auditStats struct {
	Tools   []*toolStats   `json:"tools"`
	Runs    map[string]int `json:"runs"` // by code; "ok" for successful runs, "suspended" for runs waiting for an approval
	Records int            `json:"records"`
	Skipped int            `json:"skipped"` // lines that are not audit records
}

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
	st, err := readAuditStats(f)
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

func readAuditStats(r io.Reader) (*auditStats, error) {
	st := &auditStats{Runs: map[string]int{}, Tools: []*toolStats{}}
	by := map[string]*toolStats{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var rec struct {
			Event      string  `json:"event"`
			Tool       string  `json:"tool"`
			Code       string  `json:"code"`
			Decision   string  `json:"decision"`
			DurationMS float64 `json:"duration_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || (rec.Event != "call" && rec.Event != "run") {
			st.Skipped++
			continue
		}
		st.Records++
		if rec.Event == "run" {
			c := rec.Code
			switch {
			case rec.Decision == "suspended": // waits for a person (2026-07-28)
				c = "suspended"
			case c == "":
				c = "ok"
			}
			st.Runs[c]++
			continue
		}
		t := by[rec.Tool]
		if t == nil {
			t = &toolStats{Tool: rec.Tool}
			by[rec.Tool] = t
			st.Tools = append(st.Tools, t)
		}
		switch rec.Code {
		case "":
			t.OK++
		case "E_TOOL_DENIED":
			t.Denied++
		default:
			t.Failed++
		}
		t.durs = append(t.durs, rec.DurationMS)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, t := range st.Tools {
		slices.Sort(t.durs)
		t.P50MS, t.P95MS = quantile(t.durs, 0.50), quantile(t.durs, 0.95)
	}
	sort.Slice(st.Tools, func(i, j int) bool { return st.Tools[i].Tool < st.Tools[j].Tool })
	return st, nil
}

// quantile is the nearest-rank quantile of sorted xs.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}
