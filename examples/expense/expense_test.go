package expense

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func byName(t testing.TB) map[string]*tools.Tool {
	t.Helper()
	c, err := tools.NewCatalog(Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*tools.Tool{}
	for _, tool := range c.List() {
		m[tool.Name] = tool
	}
	return m
}

func call(t testing.TB, tool *tools.Tool, args string) []byte {
	t.Helper()
	res, err := tool.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", tool.Name, args, err)
	}
	return res
}

func TestChecksums(t *testing.T) {
	ts := byName(t)
	for range 2 { // generated, then cached
		if got := sum(call(t, ts["get_team_members"], `{"department":"engineering"}`)); got != TeamSHA256 {
			t.Errorf("get_team_members sha256 = %s, want %s", got, TeamSHA256)
		}
		if got := sum(call(t, ts["get_expenses"], `{"member_id":"ENG-001","quarter":"Q3"}`)); got != ExpensesSHA256 {
			t.Errorf("get_expenses sha256 = %s, want %s", got, ExpensesSHA256)
		}
	}
	if got := string(call(t, ts["get_budget_by_level"], `{"level":"L3"}`)); got != `{"level":"L3","travel_limit":5000,"currency":"USD"}` {
		t.Errorf("get_budget_by_level(L3) = %s", got)
	}
}

func TestReferenceSummary(t *testing.T) {
	s := ReferenceSummary()
	var rows []OverBudget
	if err := json.Unmarshal(s, &rows); err != nil {
		t.Fatal(err)
	}
	if len(s) != SummaryBytes || len(rows) != SummaryRows || sum(s) != SummarySHA256 {
		t.Errorf("ReferenceSummary: %d bytes, %d rows, sha256 %s; want %d, %d, %s", len(s), len(rows), sum(s), SummaryBytes, SummaryRows, SummarySHA256)
	}
}

// The README's figure (and docs/workloads.md): 56 results, 313,263 bytes compact, 374,579
// pretty-printed. 56 = 1 team + 5 distinct levels + 50 members.
func TestMeasureDirect(t *testing.T) {
	d, err := MeasureDirect(context.Background(), Tools())
	if err != nil {
		t.Fatal(err)
	}
	if want := (Direct{Calls: DirectCalls, Bytes: DirectBytes, PrettyBytes: DirectPrettyBytes}); d != want {
		t.Errorf("MeasureDirect = %+v, want %+v", d, want)
	}
}

func TestArgs(t *testing.T) {
	ts := byName(t)
	for _, tt := range []struct {
		tool, args, path string
		allowed          bool
	}{
		{"get_budget_by_level", `{"level":"L9"}`, "/level", true},
		{"get_budget_by_level", `{}`, "/level", true},
		{"get_expenses", `{"member_id":"ENG-001","quarter":"Q5"}`, "/quarter", true},
		{"get_expenses", `{"member_id":"ENG-001"}`, "/quarter", true},
		{"get_expenses", `{"member":"ENG-001","quarter":"Q3"}`, "/member", false},
		{"get_expenses", `{"member_id":"` + strings.Repeat("x", 65) + `","quarter":"Q3"}`, "/member_id", false},
		{"get_expenses", `{"member_id":"","quarter":"Q3"}`, "/member_id", false},
		{"get_team_members", `{"department":"ingeniería"}`, "/department", false},
		{"get_team_members", `{"department":"eng\n"}`, "/department", false},
		{"get_team_members", `{"department":["engineering"]}`, "/department", false},
	} {
		_, err := ts[tt.tool].Call(context.Background(), json.RawMessage(tt.args))
		var e *sandbox.Error
		if !errors.As(err, &e) || e.Code != sandbox.EToolArgs || e.Path != tt.path || (len(e.AllowedValues) > 0) != tt.allowed {
			t.Errorf("%s(%s) = %#v, want E_TOOL_ARGS at %s", tt.tool, tt.args, err, tt.path)
		}
	}
}

func TestToolMetadata(t *testing.T) {
	for _, tool := range Tools() {
		if !tool.Effects.ReadOnly || !tool.Effects.Idempotent || tool.Effects.Destructive {
			t.Errorf("%s: effects %+v, want read-only and idempotent", tool.Name, tool.Effects)
		}
		d := tool.Description
		if first, _, _ := strings.Cut(d, "? "); strings.Contains(first, ".") || !strings.Contains(d, "Use when") || !strings.Contains(d, "Do not use") {
			t.Errorf("%s: description should open with its question and say when to use it and when not:\n%s", tool.Name, d)
		}
		if len(tool.Examples) != 1 {
			t.Fatalf("%s: %d examples, want 1", tool.Name, len(tool.Examples))
		}
		ex := tool.Examples[0]
		full, err := tool.Call(context.Background(), ex.Args)
		if err != nil {
			t.Errorf("%s: example args %s: %v", tool.Name, ex.Args, err)
			continue
		}
		// The example result is the real result, possibly cut after some rows.
		if !json.Valid(ex.Result) || !bytes.HasPrefix(full, bytes.TrimSuffix(ex.Result, []byte("]"))) {
			t.Errorf("%s: example result %s is not a prefix of the real result", tool.Name, ex.Result)
		}
		if tool.OutputSchema == nil || tool.InputSchema == nil {
			t.Errorf("%s: missing schemas", tool.Name)
		}
	}
}

// Results are copies: a caller that scribbles on one does not change the
// cache.
func TestCacheCopies(t *testing.T) {
	ts := byName(t)
	a := call(t, ts["get_budget_by_level"], `{"level":"L1"}`)
	want := string(a)
	for i := range a {
		a[i] = 'x'
	}
	if b := call(t, ts["get_budget_by_level"], `{"level":"L1"}`); string(b) != want {
		t.Errorf("cached result changed: %s", b)
	}
}

// A program cannot grow the cache without bound: department and member_id
// are free strings.
func TestCacheBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a few thousand results")
	}
	ts := byName(t)
	for i := range MaxCacheEntries + 100 {
		call(t, ts["get_expenses"], fmt.Sprintf(`{"member_id":"X-%d","quarter":"Q1"}`, i))
	}
	results.mu.Lock()
	n, size := results.ll.Len(), results.bytes
	results.mu.Unlock()
	if n > MaxCacheEntries || size > MaxCacheBytes {
		t.Errorf("cache holds %d entries, %d bytes; bounds are %d, %d", n, size, MaxCacheEntries, MaxCacheBytes)
	}
	// Still correct after evictions.
	if got := sum(call(t, ts["get_expenses"], `{"member_id":"ENG-001","quarter":"Q3"}`)); got != ExpensesSHA256 {
		t.Errorf("get_expenses after evictions: sha256 %s", got)
	}
}

// TestNodeCrossCheck runs the reference generator (testdata/reference-data.mjs,
// a copy of the workload's specification) with node and compares its compact
// JSON with the Go tools' for many arguments, and the result of Program run
// by node against the reference tools with ReferenceSummary.
func TestNodeCrossCheck(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the byte-for-byte cross-check with the JS reference needs it")
	}
	type callSpec [2]any
	var calls []callSpec
	for _, d := range []string{"engineering", "sales", "x", "ab", `a "quoted" <b>&amp; \ dept`, "~ ~"} {
		calls = append(calls, callSpec{"get_team_members", map[string]string{"department": d}})
	}
	for _, l := range levels {
		calls = append(calls, callSpec{"get_budget_by_level", map[string]string{"level": l}})
	}
	for i := 1; i <= 60; i += 7 {
		for _, q := range []string{"Q1", "Q2", "Q3", "Q4"} {
			calls = append(calls, callSpec{"get_expenses", map[string]string{"member_id": fmt.Sprintf("ENG-%03d", i), "quarter": q}})
		}
	}
	calls = append(calls, callSpec{"get_expenses", map[string]string{"member_id": `"<&>"`, "quarter": "Q2"}})
	input, _ := json.Marshal(map[string]any{"calls": calls, "program": Program})
	cmd := exec.Command(node, "crosscheck.mjs")
	cmd.Dir = "testdata"
	cmd.Stdin = bytes.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var ref struct {
		Results []string
		Program string
		Summary string
	}
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	ts := byName(t)
	for i, c := range calls {
		args, _ := json.Marshal(c[1])
		got := call(t, ts[c[0].(string)], string(args))
		if string(got) != ref.Results[i] {
			t.Errorf("%s(%s):\n go: %.200s\njs: %.200s", c[0], args, got, ref.Results[i])
		}
	}
	if want := string(ReferenceSummary()); ref.Program != want || ref.Summary != want {
		t.Errorf("Program under node = %.100s…, referenceSummary() = %.100s…, want %.100s…", ref.Program, ref.Summary, want)
	}
}

func BenchmarkGetExpensesCached(b *testing.B) {
	tool := byName(b)["get_expenses"]
	args := json.RawMessage(`{"member_id":"ENG-001","quarter":"Q3"}`)
	ctx := context.Background()
	if _, err := tool.Call(ctx, args); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Call(ctx, args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGenExpenses(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		genExpenses("ENG-001", "Q3")
	}
}
