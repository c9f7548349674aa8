package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCatalogCommandsTrustProject: `tools list` and `tools lint` take
// --trust-project like serve and run: with it, the project's untrusted
// script is a listed tool; without it, a skipped row that says why.
func TestCatalogCommandsTrustProject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".agents/tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n# @description Says hello to a name.\n# @param *name string who to greet\nprintf '\"hello %s\"' \"$SANDCALL_PARAM_NAME\"\n"
	if err := os.WriteFile(filepath.Join(dir, ".agents/tools/hello"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	status := func(extra ...string) string {
		t.Helper()
		out, errOut, code := sandcallIn(t, dir, nil, append([]string{"tools", "list", "--json"}, extra...)...)
		if code != 0 {
			t.Fatalf("tools list %v: exit %d\n%s%s", extra, code, out, errOut)
		}
		var rows []toolRow
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("tools list %v: %v\n%s", extra, err, out)
		}
		for _, r := range rows {
			if r.Name == "hello" {
				return r.Status
			}
		}
		return "absent"
	}
	if s := status(); !strings.Contains(s, "not trusted") {
		t.Errorf("tools list without --trust-project: hello is %q, want skipped as not trusted", s)
	}
	if s := status("--trust-project"); s != "ok" {
		t.Errorf("tools list --trust-project: hello is %q, want ok", s)
	}
	out, errOut, code := sandcallIn(t, dir, nil, "tools", "lint", "--trust-project", "--json")
	if code == 2 || strings.Contains(errOut, "not trusted") || !strings.Contains(out, `"hello"`) {
		t.Errorf("tools lint --trust-project: exit %d, hello not linted\n%s%s", code, out, errOut)
	}
}

// TestToolsListNameClash: two stdio servers of the project ("demo-x" and
// "demo_x", the real binary serving its demo tools) both have a tool named
// demo_x_ping: `tools list` shows demo-x's (its name sorts first) and a
// row saying demo_x's is left out by a name clash, not a changed
// definition.
func TestToolsListNameClash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	def := map[string]any{"command": bin, "args": []string{"serve", "--demo", "--isolation", "inprocess"}}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"demo-x": def, "demo_x": def}})
	writeFile(t, dir, ".mcp.json", string(cfg))
	out, errOut, code := sandcallIn(t, dir, nil, "tools", "list", "--trust-project", "--json")
	if code != 0 {
		t.Fatalf("tools list: exit %d\n%s%s", code, out, errOut)
	}
	var rows []toolRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got []string
	for _, r := range rows {
		if r.Name == "demo_x_ping" {
			got = append(got, r.Source+": "+r.Status)
		}
	}
	sort.Strings(got)
	want := []string{"demo-x: ok", "demo_x: skipped: name clash: server demo-x has a tool of the same name and is used (the server whose name sorts first)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("demo_x_ping rows:\n%s\nwant:\n%s\nstderr:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), errOut)
	}
	if strings.Contains(out+errOut, "changed since") {
		t.Errorf("a clash reported as a changed definition:\n%s%s", out, errOut)
	}
	out, _, _ = sandcallIn(t, dir, nil, "servers", "list")
	if !strings.Contains(out, "name clash: its tools are named demo_x_… like server demo-x's; where both have a tool, demo-x's is used") {
		t.Errorf("servers list does not report the clash:\n%s", out)
	}
}

// TestProjectTrust: a cloned project's .mcp.json server and .agents/tools
// script do not run until `sandcall servers trust`; the refusal names the
// command; a changed definition or script needs trust again;
// --trust-project trusts for one invocation.
func TestProjectTrust(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(dir, "server-ran")
	def := map[string]any{"command": "sh", "args": []string{"-c", "touch " + marker + "; exec " + bin + " serve --demo --isolation inprocess"}}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"x": def}})
	writeFile(t, dir, ".mcp.json", string(cfg))
	if err := os.MkdirAll(filepath.Join(dir, ".agents/tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n# @description Says hello to a name.\n# @param *name string who to greet\nprintf '\"hello %s\"' \"$SANDCALL_PARAM_NAME\"\n"
	if err := os.WriteFile(filepath.Join(dir, ".agents/tools/hello"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	prog := writeFile(t, dir, "p.js", `const r = []
for (const f of [() => tools.call("x_ping", {n: 1}), () => tools.call("hello", {name: "ada"})]) {
  try { r.push(await f()) } catch (e) { r.push(e.code) }
}
return r`)
	run := func(want string, extra ...string) string {
		t.Helper()
		os.Remove(marker)
		out, errOut, code := sandcallIn(t, dir, nil, append(append([]string{"run", "--isolation", "inprocess", "--json"}, extra...), prog)...)
		if code != 0 || !strings.Contains(out, `"result":`+want) {
			t.Errorf("run %v: exit %d, want result %s\n%s%s", extra, code, want, out, errOut)
		}
		_, err := os.Stat(marker)
		if ran := err == nil; ran != strings.HasPrefix(want, "[2") {
			t.Errorf("run %v: the server's command ran: %v", extra, ran)
		}
		return errOut
	}
	errOut := run(`["E_TOOL_UNKNOWN","E_TOOL_UNKNOWN"]`)
	if !strings.Contains(errOut, `x\" from .mcp.json is not trusted`) || !strings.Contains(errOut, "runs sh -c touch") ||
		!strings.Contains(errOut, "sandcall servers trust") {
		t.Errorf("the refusal does not name the server, its command and the way out:\n%s", errOut)
	}
	if !strings.Contains(errOut, "not trusted") || !strings.Contains(errOut, "hello") {
		t.Errorf("the skipped script is not reported:\n%s", errOut)
	}
	run(`[2,"hello ada"]`, "--trust-project")
	if out, _, _ := sandcallIn(t, dir, nil, "servers", "list"); !strings.Contains(out, "not trusted") {
		t.Errorf("servers list does not say x is not trusted:\n%s", out)
	}

	out, errOut, code := sandcallIn(t, dir, nil, "servers", "trust")
	if code != 0 || !strings.Contains(out, "trusted server x") || !strings.Contains(out, "hello") {
		t.Fatalf("servers trust: exit %d\n%s%s", code, out, errOut)
	}
	run(`[2,"hello ada"]`)
	if out, _, _ := sandcallIn(t, dir, nil, "servers", "list"); strings.Contains(out, "not trusted") {
		t.Errorf("servers list says a trusted server is not:\n%s", out)
	}

	// Disabling and enabling keeps the trust; a changed command does not.
	if _, errOut, code := sandcallIn(t, dir, nil, "servers", "disable", "x"); code != 0 {
		t.Fatalf("disable: %s", errOut)
	}
	if _, errOut, code := sandcallIn(t, dir, nil, "servers", "enable", "x"); code != 0 {
		t.Fatalf("enable: %s", errOut)
	}
	run(`[2,"hello ada"]`)
	def["args"] = []string{"-c", "touch " + marker + "; exec " + bin + " serve --demo"}
	cfg, _ = json.Marshal(map[string]any{"mcpServers": map[string]any{"x": def}})
	writeFile(t, dir, ".mcp.json", string(cfg))
	if err := os.WriteFile(filepath.Join(dir, ".agents/tools/hello"), []byte(script+"# changed\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(`["E_TOOL_UNKNOWN","E_TOOL_UNKNOWN"]`)
}
