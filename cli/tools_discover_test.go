package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestToolsSearchDescribe runs `sandcall tools search` and `tools describe`
// on the demo tools through the real binary.
func TestToolsSearchDescribe(t *testing.T) {
	t.Parallel()
	out, errOut, code := sandcall(t, "", "tools", "search", "--demo", "--json", "--limit", "2", "travel budget of an employee level")
	if code != 0 {
		t.Fatalf("tools search: exit %d: %s", code, errOut)
	}
	var sr struct {
		Tools []struct{ Name, Signature string }
		Shown int
	}
	if err := json.Unmarshal([]byte(out), &sr); err != nil {
		t.Fatalf("tools search --json: %v\n%s", err, out)
	}
	if sr.Shown == 0 || sr.Shown > 2 || sr.Tools[0].Name != "get_budget_by_level" ||
		!strings.HasPrefix(sr.Tools[0].Signature, `get_budget_by_level(args: {level: "L1" | "L2"`) {
		t.Errorf("tools search: %s", out)
	}

	out, errOut, code = sandcall(t, "", "tools", "describe", "--demo", "get_expenses")
	if code != 0 || !strings.Contains(out, "get_expenses(args: {") || !strings.Contains(out, "@example") ||
		!strings.Contains(out, `quarter: "Q1" | "Q2" | "Q3" | "Q4";`) {
		t.Errorf("tools describe: exit %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = sandcall(t, "", "tools", "describe", "--demo", "no_such_tool")
	if code != 1 || !strings.Contains(errOut, "E_TOOL_UNKNOWN") || !strings.Contains(errOut, "hint:") {
		t.Errorf("describe of an unknown tool: exit %d: %s", code, errOut)
	}
	_, _, code = sandcall(t, "", "tools", "search")
	if code != 2 {
		t.Errorf("search without a query: exit %d, want 2", code)
	}
}

// TestDiscoveryInProcessTier: a program in a worker process finds and
// describes tools with tools.$search and tools.$describe, whose calls come
// back to the broker over IPC.
func TestDiscoveryInProcessTier(t *testing.T) {
	t.Parallel()
	prog := `const s = await tools.$search("team members of a department", 2);
const d = await tools.$describe(s.tools[0].name);
return {first: s.tools[0].name, described: d.described, decl: d.declarations.includes("get_team_members(args: {")};`
	out, errOut, code := sandcall(t, prog, "run", "--demo", "--json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, out, errOut)
	}
	var res struct {
		Result json.RawMessage
		Tier   string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if got := string(res.Result); got != `{"first":"get_team_members","described":["get_team_members"],"decl":true}` {
		t.Errorf("result %s (tier %s)", got, res.Tier)
	}
	if !strings.HasPrefix(res.Tier, "process") {
		t.Errorf("tier %q, want the process tier", res.Tier)
	}
}

// TestToolsListDemo: `tools list` shows every tool a server would offer:
// the demo toolsets and the discovery tools, each with source and callers.
func TestToolsListDemo(t *testing.T) {
	t.Parallel()
	out, errOut, code := sandcall(t, "", "tools", "list", "--demo", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var rows []struct {
		Name, Source, Status string
		Callers              []string
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r.Name] = r.Source + " " + strings.Join(r.Callers, ",") + " " + r.Status
	}
	for _, name := range []string{"search_tools", "describe_tools", "get_expenses", "get_stock_snapshot", "ping"} {
		if got[name] != "builtin direct,code ok" {
			t.Errorf("%s: %q, want \"builtin direct,code ok\"", name, got[name])
		}
	}
}
