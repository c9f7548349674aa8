package policies_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// TestPolicyFiles runs every *_test.yaml as `sandcall policy test` does.
func TestPolicyFiles(t *testing.T) {
	files, err := filepath.Glob("*_test.yaml")
	if err != nil || len(files) < 3 {
		t.Fatalf("test files: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			s, err := policy.LoadSuite(f)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if !policy.Report(&out, s, s.Run()) {
				t.Errorf("policy test %s:\n%s", f, out.String())
			}
		})
	}
	// Every example policy compiles on its own, as `policy check` does.
	pols, _ := filepath.Glob("*.yaml")
	for _, p := range pols {
		if strings.HasSuffix(p, "_test.yaml") {
			continue
		}
		if _, err := policy.Load(p); err != nil {
			t.Errorf("policy check %s: %v", p, err)
		}
	}
}

// TestSuiteMismatchFails: a wrong expectation is reported as FAIL with its
// line, and Report says the suite failed.
func TestSuiteMismatchFails(t *testing.T) {
	dir := t.TempDir()
	abs, _ := filepath.Abs("expense.yaml")
	f := filepath.Join(dir, "bad_test.yaml")
	src := "policy: " + abs + "\ncases:\n  - name: wrong\n    tool: get_expenses\n    caller: direct\n    expect: allow\n"
	if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := policy.LoadSuite(f)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if policy.Report(&out, s, s.Run()) {
		t.Fatal("a mismatch passed")
	}
	if !strings.Contains(out.String(), "FAIL  "+f+":3: wrong: got deny, want allow") {
		t.Errorf("report:\n%s", out.String())
	}
}

func newRunner(t *testing.T, policyFile string) (*bindings.Runner, *bindings.Broker) {
	t.Helper()
	cat, err := tools.NewCatalog(demo.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bindings.LoadPolicyFile(policyFile, b, nil); err != nil {
		t.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	return r, b
}

// TestDeniedMidRun: under expense.yaml a program reads Q3, is denied Q4,
// catches the ToolError and reports its code, rule and message.
func TestDeniedMidRun(t *testing.T) {
	r, b := newRunner(t, "expense.yaml")
	prog := `
const q3 = await tools.get_expenses({ member_id: "ENG-001", quarter: "Q3" });
try {
  await tools.get_expenses({ member_id: "ENG-001", quarter: "Q4" });
  return "not denied";
} catch (e) {
  return { q3: q3.length > 0, code: e.code, rule: e.rule, message: e.message, hint: e.hint };
}`
	res := r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Source: prog}})
	if !res.OK {
		t.Fatalf("run failed: %v", res.Error)
	}
	var got map[string]any
	if err := json.Unmarshal(res.Result, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"q3": true, "code": "E_TOOL_DENIED", "rule": "expenses-closed-quarters",
		"message": "Q4 expenses are not closed yet", "hint": "Ask for Q1, Q2 or Q3."}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (result %s)", k, got[k], v, res.Result)
		}
	}
	if res.Calls.Denied != 1 || res.Calls.OK != 1 {
		t.Errorf("calls %+v", res.Calls)
	}
	// Code-only tools are absent from the direct listing.
	for _, tl := range b.Exposed(tools.Direct, bindings.LocalPrincipal) {
		switch tl.Name {
		case "get_expenses", "get_team_members", "get_budget_by_level": // the market tools' get_* are not code-only
			t.Errorf("code-only %s listed for direct calls", tl.Name)
		}
	}
	// The expense workload itself still runs, byte for byte.
	res = r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Source: expense.Program}})
	if !res.OK || string(res.Result) != string(expense.ReferenceSummary()) {
		t.Fatalf("expense workload under expense.yaml: %v %.100s", res.Error, res.Result)
	}
}

// TestDirectOnlyUndefinedInSandbox: a tool the policy makes direct-only is
// not bound ('ping' in tools is false), and calling it — tools.ping() or
// tools.call — is denied with the rule, as a ToolError.
func TestDirectOnlyUndefinedInSandbox(t *testing.T) {
	f := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(f, []byte("version: 1\nrules: [{name: ping-direct, tools: [ping], allowed_callers: [direct]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, _ := newRunner(t, f)
	prog := `
let err = null, direct = null;
try { await tools.call("ping", { n: 1 }); } catch (e) { err = e.code + " " + e.rule; }
try { await tools.ping({ n: 1 }); } catch (e) { direct = e.code + " " + e.rule; }
return { bound: 'ping' in tools, err, direct };`
	res := r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Source: prog}})
	if !res.OK {
		t.Fatalf("run failed: %v", res.Error)
	}
	if s := string(res.Result); s != `{"bound":false,"err":"E_TOOL_DENIED ping-direct","direct":"E_TOOL_DENIED ping-direct"}` {
		t.Errorf("result %s", s)
	}
}
