package bindings

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

func TestClosest(t *testing.T) {
	names := []string{"get_expenses", "get_team_members", "github_create_issue", "github_update_issue",
		"github_create_pull_request", "filesystem_read_text_file", "filesystem_write_file", "memory_create_entities"}
	cases := []struct {
		name string
		want []string
	}{
		{"get_expense", []string{"get_expenses"}},
		{"getExpenses", []string{"get_expenses"}},
		{"tools.get_expenses", []string{"get_expenses"}},
		{"create_issue", []string{"github_create_issue"}},
		{"github_create_isue", []string{"github_create_issue"}},
		{"filesystem_writefile", []string{"filesystem_write_file"}},
		{"create_pull_request", []string{"github_create_pull_request"}},
		{"no_such_tool", nil},
		{"x", nil},
		{"", nil},
	}
	for _, c := range cases {
		got := Closest(c.name, names, 3)
		if len(c.want) == 0 && len(got) == 0 {
			continue
		}
		if len(got) < len(c.want) || !slices.Equal(got[:len(c.want)], c.want) {
			t.Errorf("Closest(%q) = %v, want %v first", c.name, got, c.want)
		}
	}
}

// TestMissingToolErrors: from a real JavaScript program, a call to a tool
// that is not bound — unknown, misspelt, with its server prefix dropped,
// denied to code, removed from the catalog, disabled by its source —
// rejects with a ToolError the program can catch, whose code and hint name
// the way out; `'name' in tools` tells bound tools apart.
func TestMissingToolErrors(t *testing.T) {
	write := echo("github_delete_repository")
	write.Effects = tools.Effects{Destructive: true}
	b := newBroker(t, BrokerConfig{}, echo("get_expenses"), echo("github_create_issue"), write, echo("old_tool"))
	b.SetUnavailable(func(name string) (Unavailability, bool) {
		if name == "github_merge_pull_request" {
			return Unavailability{Message: "tool github_merge_pull_request is disabled: its definition changed since it was approved",
				Hint: "An operator re-enables it with `sandcall tools approve github_merge_pull_request` after reviewing the change.", Rule: "upstream.pin_changed"}, true
		}
		return Unavailability{}, false
	})
	r, err := NewRunner(RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	b.Catalog().Remove("old_tool")
	src := `
const catching = async (f) => { try { await f(); return null } catch (e) {
  return { toolError: e instanceof ToolError, code: e.code, message: e.message, hint: e.hint, rule: e.rule || '' } } }
return {
  has: ['get_expenses' in tools, 'no_such_tool' in tools, 'github_delete_repository' in tools],
  keys: Object.keys(tools),
  unknown: await catching(() => tools.no_such_tool({})),
  misspelt: await catching(() => tools.get_expense({})),
  prefix: await catching(() => tools.create_issue({title: 'x'})),
  viaCall: await catching(() => tools.call('getExpenses', {})),
  denied: await catching(() => tools.github_delete_repository({})),
  removed: await catching(() => tools.old_tool({})),
  disabled: await catching(() => tools.github_merge_pull_request({})),
  awaited: typeof (await tools),
}`
	res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: src}})
	if !res.OK {
		t.Fatalf("run failed: %+v", res.Error)
	}
	type failure struct {
		ToolError           bool
		Code, Message, Hint string
		Rule                string
	}
	var out struct {
		Has                                                           []bool
		Keys                                                          []string
		Unknown, Misspelt, Prefix, ViaCall, Denied, Removed, Disabled failure
		Awaited                                                       string
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Has, []bool{true, false, false}) {
		t.Errorf("'name' in tools = %v", out.Has)
	}
	if slices.Contains(out.Keys, "call") || !slices.Contains(out.Keys, "get_expenses") || slices.Contains(out.Keys, "github_delete_repository") {
		t.Errorf("Object.keys(tools) = %v", out.Keys)
	}
	if out.Awaited != "object" {
		t.Errorf("await tools = %s", out.Awaited)
	}
	check := func(what string, f failure, code sandbox.Code, hint ...string) {
		t.Helper()
		if !f.ToolError || f.Code != string(code) {
			t.Errorf("%s: %+v, want a ToolError %s", what, f, code)
		}
		for _, h := range hint {
			if !strings.Contains(f.Hint, h) && !strings.Contains(f.Message, h) {
				t.Errorf("%s: message %q, hint %q lack %q", what, f.Message, f.Hint, h)
			}
		}
	}
	check("unknown", out.Unknown, sandbox.EToolUnknown, `no tool named "no_such_tool"`, "'name' in tools", "$search")
	if strings.Contains(out.Unknown.Hint, "Did you mean") {
		t.Errorf("unknown: hint suggests a tool: %q", out.Unknown.Hint)
	}
	check("misspelt", out.Misspelt, sandbox.EToolUnknown, "Did you mean tools.get_expenses?")
	check("prefix", out.Prefix, sandbox.EToolUnknown, "Did you mean tools.github_create_issue?")
	check("tools.call", out.ViaCall, sandbox.EToolUnknown, "tools.get_expenses")
	check("denied", out.Denied, sandbox.EToolDenied, "directly as an MCP tool", "may not be called from code")
	check("removed", out.Removed, sandbox.EToolUnknown, "was removed")
	check("disabled", out.Disabled, sandbox.EToolDenied, "sandcall tools approve github_merge_pull_request")
	if out.Disabled.Rule != "upstream.pin_changed" {
		t.Errorf("disabled: rule %q", out.Disabled.Rule)
	}
	for _, f := range []failure{out.Unknown, out.Misspelt, out.Denied} {
		if strings.Contains(f.Hint, "Ask the user") {
			t.Errorf("hint asks for what the caller cannot do: %q", f.Hint)
		}
	}
}
