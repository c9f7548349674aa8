package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePolicy(t *testing.T, name, src string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPolicyCheck(t *testing.T) {
	t.Parallel()
	ex := filepath.Join("..", "examples", "policies")
	stdout, stderr, code := sandcall(t, "", "policy", "check", filepath.Join(ex, "expense.yaml"), filepath.Join(ex, "payments.yaml"))
	if code != 0 || strings.Count(stdout, ": ok (") != 2 {
		t.Fatalf("check examples: exit %d\n%s%s", code, stdout, stderr)
	}
	bad := writePolicy(t, "bad.yaml", "version: 1\nrules:\n  - tools: [x]\n    when: 'args.n > limit'\n    bogus: true\n")
	_, stderr, code = sandcall(t, "", "policy", "check", bad)
	if code != 1 || stderr != bad+":5:5: unknown key \"bogus\"\n" {
		t.Fatalf("check bad: exit %d, stderr %q", code, stderr)
	}
	bad = writePolicy(t, "bad.yaml", "version: 1\nrules:\n  - tools: [x]\n    when: 'args.n > limit'\n  - allowed_callers: [robot]\n")
	_, stderr, code = sandcall(t, "", "policy", "check", bad)
	want := bad + ":4:21: rules[0]: when: unknown name limit\n" + bad + ":5:23: rules[1]: allowed_callers: unknown caller \"robot\" (want direct or code)\n"
	if code != 1 || stderr != want {
		t.Fatalf("check bad: exit %d, stderr %q\nwant %q", code, stderr, want)
	}
	if _, _, code := sandcall(t, "", "policy", "check"); code != 2 {
		t.Errorf("check without files: exit %d", code)
	}
	if _, _, code := sandcall(t, "", "policy", "frobnicate"); code != 2 {
		t.Errorf("unknown subcommand: exit %d", code)
	}
}

func TestPolicyTest(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("..", "examples", "policies", "*_test.yaml"))
	stdout, stderr, code := sandcall(t, "", append([]string{"policy", "test"}, files...)...)
	if code != 0 || strings.Contains(stdout, "FAIL") || !strings.Contains(stdout, "PASS  ") {
		t.Fatalf("test examples: exit %d\n%s%s", code, stdout, stderr)
	}
	pol := writePolicy(t, "p.yaml", "version: 1\nrules: [{name: r, tools: [a], allowed_callers: [code]}]\n")
	suite := filepath.Join(filepath.Dir(pol), "p_test.yaml")
	os.WriteFile(suite, []byte("policy: p.yaml\ncases:\n  - {name: ok, tool: a, caller: code, expect: allow, rule: r}\n  - {name: wrong, tool: a, caller: direct, expect: allow}\n"), 0o600)
	stdout, _, code = sandcall(t, "", "policy", "test", suite)
	if code != 1 || !strings.Contains(stdout, "PASS  "+suite+": ok") || !strings.Contains(stdout, "FAIL  "+suite+":4: wrong: got deny, want allow") {
		t.Fatalf("failing suite: exit %d\n%s", code, stdout)
	}
}

// TestPolicyTestCatalogMeta: a policy test case that states no tool
// metadata takes the tool's from the catalog serve would build (here the
// demo tools: get_expenses is read-only), as the server decides with it.
func TestPolicyTestCatalogMeta(t *testing.T) {
	t.Parallel()
	pol := writePolicy(t, "ro.yaml", "version: 1\nrules:\n  - {name: reads, match: {read_only: true}, allowed_callers: [code]}\n  - {name: rest, allowed_callers: [direct]}\n")
	suite := filepath.Join(filepath.Dir(pol), "ro_test.yaml")
	os.WriteFile(suite, []byte("policy: ro.yaml\ncases:\n  - {name: catalog read, tool: get_expenses, caller: code, expect: allow, rule: reads}\n"), 0o600)
	if stdout, _, code := sandcall(t, "", "policy", "test", "--demo", suite); code != 0 {
		t.Errorf("with the catalog: exit %d\n%s", code, stdout)
	}
	// Without --demo the tool is not in the catalog: the case's (empty)
	// metadata decides, and the read-only rule does not match.
	if stdout, _, code := sandcall(t, "", "policy", "test", suite); code != 1 {
		t.Errorf("without the catalog: exit %d\n%s", code, stdout)
	}
}

func TestPolicyExplain(t *testing.T) {
	t.Parallel()
	pay := filepath.Join("..", "examples", "policies", "payments.yaml")
	stdout, stderr, code := sandcall(t, "", "policy", "explain", "--policy", pay, "--tool", "send_payment", "--caller", "direct",
		"--destructive", "--args", `{"amount": 5000, "to": "ACME"}`, "--principal", "alice", "--roles", "finance")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"decision:  deny\n", "rule:      payments\n", "reason:    when is false: ", "message:   payments over 1000"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("explain output lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, code = sandcall(t, "", "policy", "explain", "--demo", "--tool", "get_expenses", "--caller", "code")
	if code != 0 || !strings.Contains(stdout, "decision:  allow\n") || !strings.Contains(stdout, "rule:      default\n") ||
		!strings.Contains(stdout, "(read-only, idempotent, source builtin)") || !strings.Contains(stdout, "exists:    yes") {
		t.Errorf("explain --demo: exit %d\n%s", code, stdout)
	}
	// A tool that does not exist is said so, with the closest names.
	stdout, _, code = sandcall(t, "", "policy", "explain", "--demo", "--tool", "get_expense", "--caller", "code")
	if code != 1 || !strings.Contains(stdout, "exists:    no — no tool named get_expense") || !strings.Contains(stdout, "did you mean get_expenses") {
		t.Errorf("explain of a missing tool: exit %d\n%s", code, stdout)
	}
	if _, _, code := sandcall(t, "", "policy", "explain", "--tool", "x", "--caller", "robot"); code != 2 {
		t.Errorf("bad caller: exit %d", code)
	}
}

// TestRunWithPolicy: --policy puts a policy in force for run; an invalid
// policy stops the command with file:line:col.
func TestRunWithPolicy(t *testing.T) {
	t.Parallel()
	pol := writePolicy(t, "p.yaml", "version: 1\nrules:\n  - name: no-q4\n    tools: [get_expenses]\n    when: 'args.quarter != \"Q4\"'\n    message: Q4 is closed\n")
	prog := `try { await tools.get_expenses({member_id: "ENG-001", quarter: "Q4"}); return "allowed"; } catch (e) { return e.code + " " + e.rule + " " + e.message; }`
	stdout, stderr, code := sandcall(t, prog, "run", "--demo", "--isolation", "inprocess", "--policy", pol, "-")
	if code != 0 || strings.TrimSpace(stdout) != `"E_TOOL_DENIED no-q4 Q4 is closed"` {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	bad := writePolicy(t, "bad.yaml", "version: 1\nrules: [{tools: ['[']}]\n")
	_, stderr, code = sandcall(t, "return 1", "run", "--isolation", "inprocess", "--policy", bad, "-")
	if code != 1 || !strings.Contains(stderr, bad+":2:18: rules[0]: tools: bad glob") {
		t.Fatalf("bad policy: exit %d, stderr %q", code, stderr)
	}
}
