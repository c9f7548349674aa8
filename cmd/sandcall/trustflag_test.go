package main

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
