package policy

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustParse(t testing.TB, src string) *Checker {
	t.Helper()
	c, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse:\n%v", err)
	}
	return c
}

// call is a compact Request for tables.
type call struct {
	tool, caller string
	args         string
	meta         ToolMeta
	principal    Principal
	run          Run
	at           time.Duration
}

func (c call) req() *Request {
	r := &Request{Tool: c.tool, Caller: c.caller, Meta: c.meta, Principal: c.principal, Run: c.run,
		Time: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(c.at)}
	if c.args != "" {
		r.Args = []byte(c.args)
	}
	if r.Principal.ID == "" {
		r.Principal.ID = "local"
	}
	return r
}

type want struct {
	allow  bool
	rule   string
	reason string // substring of Reason
}

func check(t *testing.T, c *Checker, cl call, w want) {
	t.Helper()
	d := c.Decide(cl.req())
	if d.Allow != w.allow || (w.rule != "" && d.Rule != w.rule) || !strings.Contains(d.Reason, w.reason) {
		t.Errorf("%s by %s: got allow=%t rule=%s reason=%q; want allow=%t rule=%s reason~%q",
			cl.tool, cl.caller, d.Allow, d.Rule, d.Reason, w.allow, w.rule, w.reason)
	}
	if d.Rule == "" || d.Reason == "" {
		t.Errorf("%s: decision without rule or reason: %+v", cl.tool, d)
	}
	if !d.Allow && d.Message == "" {
		t.Errorf("%s: denial without a message: %+v", cl.tool, d)
	}
}

var destructive = ToolMeta{Destructive: true}

func TestDefault(t *testing.T) {
	c := Default()
	for _, tc := range []struct {
		call
		want
	}{
		{call{tool: "read", caller: Code}, want{true, "default", ""}},
		{call{tool: "read", caller: Direct}, want{true, "default", ""}},
		{call{tool: "rm", caller: Direct, meta: destructive}, want{true, "default", ""}},
		{call{tool: "rm", caller: Code, meta: destructive}, want{false, "default.destructive_direct_only", "not in allowed_callers [direct]"}},
		{call{tool: "own", caller: Direct, meta: ToolMeta{AllowedCallers: []string{Code}}}, want{false, "tool.allowed_callers", ""}},
		{call{tool: "own", caller: Code, meta: ToolMeta{AllowedCallers: []string{Code}, Destructive: true}}, want{true, "tool.allowed_callers", ""}},
		{call{tool: "x", caller: "admin"}, want{false, "policy.error", "unknown caller"}},
	} {
		check(t, c, tc.call, tc.want)
	}
}

func TestToolSelection(t *testing.T) {
	c := mustParse(t, `version: 1
defaults: {allowed_callers: [direct]}
rules:
  - name: exact
    tools: [get_expenses]
    allowed_callers: [code]
  - name: glob
    tools: ["github_*", "jira_?"]
    allowed_callers: [code]
  - name: readonly-upstream
    match: {read_only: true, source: "up*"}
    allowed_callers: [direct, code]
  - name: destructive
    match: {destructive: true}
    allowed_callers: []
`)
	up := ToolMeta{ReadOnly: true, Source: "upstream1"}
	for _, tc := range []struct {
		call
		want
	}{
		{call{tool: "get_expenses", caller: Code}, want{true, "exact", ""}},
		{call{tool: "get_expenses", caller: Direct}, want{false, "exact", "caller direct"}},
		{call{tool: "github_issues", caller: Code}, want{true, "glob", ""}},
		{call{tool: "jira_x", caller: Code}, want{true, "glob", ""}},
		{call{tool: "jira_xy", caller: Code}, want{false, "defaults", ""}},
		{call{tool: "search", caller: Code, meta: up}, want{true, "readonly-upstream", ""}},
		{call{tool: "search", caller: Code, meta: ToolMeta{ReadOnly: true}}, want{false, "defaults", ""}},              // source builtin
		{call{tool: "search", caller: Code, meta: ToolMeta{ReadOnly: true, Source: "x"}}, want{false, "defaults", ""}}, // other source
		{call{tool: "rm", caller: Direct, meta: destructive}, want{false, "destructive", "[]"}},
		{call{tool: "other", caller: Direct}, want{true, "defaults", ""}},
	} {
		check(t, c, tc.call, tc.want)
	}
}

func TestFirstMatchWins(t *testing.T) {
	c := mustParse(t, `version: 1
rules:
  - tools: [delete_repo]
    allowed_callers: [direct]
  - tools: ["github_*", delete_repo]
    max_calls_per_run: 2
  - tools: ["*"]
    when: 'false'
`)
	check(t, c, call{tool: "delete_repo", caller: Code}, want{false, "rules[0]", ""})
	check(t, c, call{tool: "delete_repo", caller: Direct}, want{true, "rules[0]", ""})
	check(t, c, call{tool: "github_x", caller: Code, run: Run{CallsByTool: map[string]int{"github_x": 1}}}, want{true, "rules[1]", ""})
	check(t, c, call{tool: "github_x", caller: Code, run: Run{CallsByTool: map[string]int{"github_x": 2}}}, want{false, "rules[1]", "quota"})
	check(t, c, call{tool: "anything", caller: Direct}, want{false, "rules[2]", "when is false"})
}

func TestRuleWithoutCallersInheritsDefault(t *testing.T) {
	c := mustParse(t, `version: 1
rules:
  - tools: ["*"]
    max_calls_per_run: 5
`)
	check(t, c, call{tool: "rm", caller: Code, meta: destructive}, want{false, "rules[0]", "[direct]"})
	check(t, c, call{tool: "ls", caller: Code}, want{true, "rules[0]", ""})
	c = mustParse(t, "version: 1\ndefaults: {allowed_callers: [code]}\nrules: [{tools: [a]}]\n")
	check(t, c, call{tool: "a", caller: Direct}, want{false, "rules[0]", "[code]"})
	check(t, c, call{tool: "rm", caller: Code, meta: destructive}, want{true, "defaults", ""})
	// A tool's own declaration is a ceiling even when a rule allows.
	c = mustParse(t, "version: 1\nrules: [{tools: [a], allowed_callers: [direct, code]}]\n")
	check(t, c, call{tool: "a", caller: Direct, meta: ToolMeta{AllowedCallers: []string{Code}}}, want{false, "tool.allowed_callers", ""})
}

func TestWhenVariables(t *testing.T) {
	rule := func(expr string) *Checker {
		return mustParse(t, "version: 1\nrules:\n  - tools: [t]\n    when: '"+strings.ReplaceAll(expr, "'", "''")+"'\n")
	}
	base := call{tool: "t", caller: Code, args: `{"amount": 500, "tags": ["a","b"], "nested": {"k": [1,2,3]}}`,
		meta:      ToolMeta{ReadOnly: true, Idempotent: true, Source: "jira"},
		principal: Principal{ID: "alice", Roles: []string{"finance"}},
		run:       Run{ID: "r1", Calls: 3, CallsByTool: map[string]int{"t": 2}, Elapsed: 1500 * time.Millisecond}}
	for _, tc := range []struct {
		expr  string
		allow bool
	}{
		{`caller == "code"`, true},
		{`caller == "direct"`, false},
		{`tool == "t"`, true},
		{`args.amount <= 1000`, true},
		{`args.amount > 1000`, false},
		{`"b" in args.tags && len(args.tags) == 2`, true},
		{`args.nested.k[2] == 3`, true},
		{`all(args.tags, len(#) == 1)`, true},
		{`args.missing == nil`, true},
		{`principal.id == "alice"`, true},
		{`"finance" in principal.roles`, true},
		{`"admin" in principal.roles`, false},
		{`run.id == "r1" && run.calls == 3`, true},
		{`run.calls_by_tool[tool] < 2`, false},
		{`run.calls_by_tool["other"] == 0`, true},
		{`run.elapsed_ms == 1500`, true},
		{`tool_meta.read_only && tool_meta.idempotent && !tool_meta.destructive && !tool_meta.open_world`, true},
		{`tool_meta.source == "jira"`, true},
		{`args.amount <= 1000 && "finance" in principal.roles`, true},
	} {
		d := rule(tc.expr).Decide(base.req())
		if d.Allow != tc.allow {
			t.Errorf("%s: allow=%t, want %t (%s)", tc.expr, d.Allow, tc.allow, d.Reason)
		}
	}
	// Direct calls: zero run, no roles; still well-typed.
	d := rule(`run.calls_by_tool[tool] == 0 && len(principal.roles) == 0 && tool_meta.source == "builtin"`).
		Decide(call{tool: "t", caller: Direct}.req())
	if !d.Allow {
		t.Errorf("zero run: %+v", d)
	}
}

func TestEvalErrorDenies(t *testing.T) {
	c := mustParse(t, `version: 1
rules:
  - name: pay
    tools: [pay]
    when: 'args.amount <= 1000'
    message: payments over 1000 need a person
`)
	for _, tc := range []struct {
		call
		reason string
	}{
		{call{tool: "pay", caller: Direct, args: `{}`}, "evaluation failed"}, // nil <= 1000
		{call{tool: "pay", caller: Direct, args: `{"amount":"x"}`}, "evaluation failed"},
		{call{tool: "pay", caller: Direct, args: `[1]`}, "not a JSON object"},
		{call{tool: "pay", caller: Direct, args: `{bad`}, "not valid JSON"},
	} {
		d := c.Decide(tc.req())
		if d.Allow || !strings.Contains(d.Reason, tc.reason) || d.Message == "" {
			t.Errorf("%s %s: %+v", tc.tool, tc.args, d)
		}
	}
	d := c.Decide(call{tool: "pay", caller: Direct, args: `{"amount": 5000}`}.req())
	if d.Allow || d.Message != "payments over 1000 need a person" || d.Rule != "pay" {
		t.Errorf("when false: %+v", d)
	}
}

func TestArgsCaps(t *testing.T) {
	c := mustParse(t, "version: 1\nrules: [{tools: [t], when: 'args != nil'}, {tools: [u], when: 'true'}]\n")
	big := `{"s":"` + strings.Repeat("x", MaxArgsBytes) + `"}`
	d := c.Decide(call{tool: "t", caller: Code, args: big}.req())
	if d.Allow || !strings.Contains(d.Reason, "over the 65536-byte limit") || !strings.Contains(d.Message, "too large") {
		t.Errorf("big args: %+v", d)
	}
	deep := `{"a":` + strings.Repeat("[", MaxArgsDepth) + strings.Repeat("]", MaxArgsDepth) + `}`
	d = c.Decide(call{tool: "t", caller: Code, args: deep}.req())
	if d.Allow || !strings.Contains(d.Reason, "nest") {
		t.Errorf("deep args: %+v", d)
	}
	okDeep := `{"a":` + strings.Repeat("[", MaxArgsDepth-1) + strings.Repeat("]", MaxArgsDepth-1) + `, "s": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"]]"}`
	if d := c.Decide(call{tool: "t", caller: Code, args: okDeep}.req()); !d.Allow {
		t.Errorf("depth at the limit (brackets in strings do not count): %+v", d)
	}
	// A rule whose when does not read args does not look at them.
	if d := c.Decide(call{tool: "u", caller: Code, args: big}.req()); !d.Allow {
		t.Errorf("when without args: %+v", d)
	}
}

func TestQuota(t *testing.T) {
	c := mustParse(t, "version: 1\nrules: [{tools: [\"github_*\"], max_calls_per_run: 3}]\n")
	for n, allow := range []bool{true, true, true, false, false} {
		d := c.Decide(call{tool: "github_a", caller: Code,
			run: Run{CallsByTool: map[string]int{"github_a": n, "github_b": 10}}}.req())
		if d.Allow != allow {
			t.Errorf("after %d calls: %+v", n, d)
		}
	}
}

func TestRateLimit(t *testing.T) {
	c := mustParse(t, "version: 1\nrules: [{name: r, tools: [t], rate: {calls: 2, per: 1m}}, {name: s, tools: [d], when: 'false', rate: {calls: 1, per: 1m}}]\n")
	alice, bob := Principal{ID: "alice"}, Principal{ID: "bob"}
	steps := []struct {
		p     Principal
		at    time.Duration
		allow bool
	}{
		{alice, 0, true}, {alice, 0, true}, {alice, time.Second, false}, // burst of 2
		{bob, time.Second, true},         // per principal
		{alice, 30 * time.Second, true},  // one token back after per/2
		{alice, 31 * time.Second, false}, //
		{alice, 10 * time.Minute, true},  // full again, capped at 2
		{alice, 10 * time.Minute, true},  //
		{alice, 10 * time.Minute, false}, //
		{alice, 9 * time.Minute, false},  // clock going back does not refill
		{bob, 10 * time.Minute, true},    //
		{Principal{}, 0, true},           // empty id is a principal too
	}
	for i, s := range steps {
		d := c.Decide(call{tool: "t", caller: Direct, principal: s.p, at: s.at}.req())
		if d.Allow != s.allow {
			t.Errorf("step %d (%s at %s): %+v", i, s.p.ID, s.at, d)
		}
		if !d.Allow && !strings.Contains(d.Reason, "rate") {
			t.Errorf("step %d: reason %q", i, d.Reason)
		}
	}
	// A call denied by when takes no token.
	for i := 0; i < 3; i++ {
		if d := c.Decide(call{tool: "d", caller: Direct}.req()); !strings.Contains(d.Reason, "when is false") {
			t.Fatalf("denied call %d: %+v", i, d)
		}
	}
}

func TestRateLimitConcurrent(t *testing.T) {
	c := mustParse(t, "version: 1\nrules: [{tools: [t], rate: {calls: 100, per: 1h}}]\n")
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				r := call{tool: "t", caller: Code}.req()
				r.Time = time.Time{} // the real clock
				if c.Decide(r).Allow {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed < 100 || allowed > 101 { // one token may refill during the test
		t.Fatalf("allowed %d of 400 calls against a bucket of 100", allowed)
	}
}

func TestRateTableFull(t *testing.T) {
	c := mustParse(t, "version: 1\nrules: [{tools: [t], rate: {calls: 1, per: 1m}}]\n")
	for i := 0; i < MaxRateKeys; i++ {
		c.Decide(call{tool: "t", caller: Code, principal: Principal{ID: string(rune('a'+i%26)) + strings.Repeat("x", i/26)}}.req())
	}
	if d := c.Decide(call{tool: "t", caller: Code, principal: Principal{ID: "new"}}.req()); d.Allow {
		t.Errorf("full table, nothing idle: %+v", d)
	}
	if d := c.Decide(call{tool: "t", caller: Code, principal: Principal{ID: "new"}, at: time.Hour}.req()); !d.Allow {
		t.Errorf("full table, all idle: %+v", d)
	}
}

func TestApprovalAndLogArgs(t *testing.T) {
	c := mustParse(t, "version: 1\nrules: [{tools: [pay], require_approval: true, log_args: true}, {tools: [q]}]\n")
	d := c.Decide(call{tool: "pay", caller: Direct}.req())
	if !d.Allow || !d.RequireApproval || !d.LogArgs {
		t.Errorf("pay: %+v", d)
	}
	d = c.Decide(call{tool: "q", caller: Direct}.req())
	if !d.Allow || d.RequireApproval || d.LogArgs {
		t.Errorf("q: %+v", d)
	}
}

func TestExposes(t *testing.T) {
	c := mustParse(t, `version: 1
rules:
  - tools: [code_only]
    allowed_callers: [code]
  - tools: [direct_only]
    allowed_callers: [direct]
    when: 'false'
  - tools: [nobody]
    allowed_callers: []
  - tools: [quota]
    max_calls_per_run: 1
    rate: {calls: 1, per: 1h}
`)
	for _, tc := range []struct {
		tool         string
		meta         ToolMeta
		direct, code bool
	}{
		{"code_only", ToolMeta{}, false, true},
		{"direct_only", ToolMeta{}, true, false}, // when does not hide it
		{"nobody", ToolMeta{}, false, false},
		{"quota", ToolMeta{}, true, true},
		{"quota", destructive, true, false},
		{"other", ToolMeta{}, true, true},
		{"other", destructive, true, false},
		{"other", ToolMeta{AllowedCallers: []string{Code}, Destructive: true}, false, true},
		{"code_only", ToolMeta{AllowedCallers: []string{Direct}}, false, false},
	} {
		if got := c.Exposes(tc.tool, tc.meta, Direct, Principal{}); got != tc.direct {
			t.Errorf("%s %+v to direct: %t", tc.tool, tc.meta, got)
		}
		if got := c.Exposes(tc.tool, tc.meta, Code, Principal{}); got != tc.code {
			t.Errorf("%s %+v to code: %t", tc.tool, tc.meta, got)
		}
	}
	if c.Exposes("other", ToolMeta{}, "root", Principal{}) {
		t.Error("unknown caller exposed")
	}
}

// TestExposesAgreesWithDecide: a tool is exposed to a caller exactly when a
// call without conditions would pass the caller check.
func TestExposesAgreesWithDecide(t *testing.T) {
	c := mustParse(t, "version: 1\ndefaults: {allowed_callers: [code]}\nrules: [{tools: [a], allowed_callers: [direct]}, {match: {destructive: true}}]\n")
	for _, ch := range []*Checker{Default(), c} {
		for _, tool := range []string{"a", "b"} {
			for _, m := range []ToolMeta{{}, destructive, {AllowedCallers: []string{Code}}, {AllowedCallers: []string{Direct, Code}, Destructive: true}} {
				for _, caller := range []string{Direct, Code} {
					d := ch.Decide(&Request{Tool: tool, Caller: caller, Meta: m})
					if e := ch.Exposes(tool, m, caller, Principal{}); e != d.Allow {
						t.Errorf("%s: %s %+v by %s: exposes %t, decide %+v", ch.Name(), tool, m, caller, e, d)
					}
				}
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"version: 1\nrules:\n  - tools: [a]\n    when: 'args.x > 1 && foo'\n", "p.yaml:4:26: rules[0]: when: unknown name foo"},
		{"version: 1\nrules:\n  - tools: [a]\n    when: args.x > 1 && foo\n", "p.yaml:4:25: rules[0]: when: unknown name foo"},
		{"version: 1\nrules:\n  - tools: [a]\n    when: \"args.x > 1 && foo\"\n", "p.yaml:4:26: "},
		{"version: 1\nrules:\n  - tools: [a]\n    when: |\n      args.x > 1\n        && foo\n", "p.yaml:6:12: rules[0]: when: unknown name foo"},
		{"version: 1\nrules:\n  - tools: [a]\n    when: 'args.x + 1'\n", "p.yaml:4:11: rules[0]: when: expected bool"},
		{"version: 1\nrules:\n  - tools: [a]\n    bogus: 1\n", "p.yaml:4:5: unknown key \"bogus\""},
		{"version: 1\nbogus: 1\n", "p.yaml:2:1: unknown key \"bogus\""},
		{"version: 1\ndefaults: {allowed_caller: [code]}\n", "p.yaml:2:12: unknown key \"allowed_caller\""},
		{"version: 1\nrules: [{match: {readonly: true}}]\n", "unknown key \"readonly\""},
		{"version: 1\nrules:\n  - max_calls_per_run: x\n", "p.yaml:3:24: want an integer, got a string"},
		{"version: 1\nrules:\n  - tools: ['a[']\n", "p.yaml:3:13: rules[0]: tools: bad glob \"a[\""},
		{"version: 1\nrules:\n  - allowed_callers: [codee]\n", "p.yaml:3:23: rules[0]: allowed_callers: unknown caller \"codee\""},
		{"version: 1\ndefaults: {allowed_callers: [x]}\n", "p.yaml:2:30: defaults: allowed_callers: unknown caller"},
		{"version: 2\n", "p.yaml:1:10: version: unsupported version 2"},
		{"rules: []\n", "p.yaml:1:1: version: required"},
		{"version: 1\nrules:\n  - rate: {calls: 1, per: 1x}\n", "p.yaml:3:12: time: unknown unit"},
		{"version: 1\nrules:\n  - rate: {calls: 0, per: 1m}\n", "rate.calls: want 1"},
		{"version: 1\nrules:\n  - max_calls_per_run: 0\n", "max_calls_per_run: 0 would never"},
		{"version: 1\nrules:\n  - when: 'repeat(\"a\", 9) != \"\"'\n", "unknown name repeat"},
		{"version: 1\nrules:\n  - when: 'now() != nil'\n", "unknown name now"},
		{"version: 1\nrules:\n  - when: 'all(args.a, any(args.b, # == 1))'\n", "inside another is not allowed"},
		{"version: 1\nrules:\n  - when: ''\n", "when: empty expression"},
		{"version: 1\nrules:\n  - tools: []\n", "tools: empty list"},
		{"version: 1\nrules:\n  - name: a\n  - name: a\n", "p.yaml:4:5: rules[1]: name \"a\" is already used by rules[0]"},
		{"version: 1\nrules:\n  - name: default\n", "name \"default\" is reserved"},
		{"version: 1\nx: &a 1\n", "anchors, aliases"},
		{"version: 1\nrules: [\n", "p.yaml:2:8: "},
		{"version: 1\nversion: 1\n", "p.yaml:2:1: mapping key \"version\" already defined"},
		{"", "p.yaml:1:1: the file is empty"},
		{"- 1\n", "p.yaml:1:1: "},
		{"version: 1\n---\nversion: 1\n", "more than one YAML document"},
		{"version: 1\nrules:\n  - when: 'unknown(1)'\n", "unknown name unknown"},
	} {
		_, err := Parse("p.yaml", []byte(tc.src))
		var pe *Error
		if !errors.As(err, &pe) || len(pe.Problems) == 0 {
			t.Errorf("%q: err = %v, want *Error", tc.src, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %s\nwant %s", tc.src, err, tc.want)
		}
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	_, err := Parse("p.yaml", []byte("version: 1\nrules:\n  - tools: ['[']\n  - when: 'x'\n  - allowed_callers: [y]\n"))
	var pe *Error
	if !errors.As(err, &pe) || len(pe.Problems) != 3 {
		t.Fatalf("err = %v", err)
	}
	for _, p := range pe.Problems {
		if p.Line == 0 || p.Col == 0 {
			t.Errorf("problem without position: %s", p)
		}
	}
}

func TestLoad(t *testing.T) {
	if _, err := Load("/nonexistent/p.yaml"); err == nil || !strings.HasPrefix(err.Error(), "/nonexistent/p.yaml: open: ") {
		t.Errorf("Load missing: %v", err)
	}
}
