package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServersCommand runs `sandcall servers list|test` in a project whose
// .mcp.json names sandcall itself as an upstream, plus a broken server.
func TestServersCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"mcpServers": {
  "demo": {"command": "` + bin + `", "args": ["serve", "--demo", "--isolation", "inprocess"]},
  "broken": {"command": "x", "url": "http://127.0.0.1:1/mcp"}
}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), code
	}
	out, _ := run("servers", "list")
	if !strings.Contains(out, "demo") || !strings.Contains(out, "enabled") || !strings.Contains(out, `invalid server "broken"`) {
		t.Errorf("servers list:\n%s", out)
	}
	out, code := run("servers", "test", "demo")
	if code != 0 || !strings.Contains(out, "ping") || !strings.Contains(out, "get_expenses") {
		t.Errorf("servers test demo: exit %d\n%s", code, out)
	}
	out, code = run("servers", "test", "nope")
	if code == 0 {
		t.Errorf("servers test of an unknown server: exit 0\n%s", out)
	}
	// A program reaches the upstream's tools as demo_<tool>, a project
	// script and a builtin demo tool in one Promise.all.
	script := "#!/bin/sh\n# @description Says hello to a name.\n# @param *name string who to greet\nprintf '\"hello %s\"' \"$SANDCALL_PARAM_NAME\"\n"
	if err := os.MkdirAll(filepath.Join(dir, ".agents/tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".agents/tools/hello"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "p.js")
	if err := os.WriteFile(prog, []byte(`return await Promise.all([tools.demo_ping({n: 1}), tools.ping({n: 2}), tools.hello({name: "ada"})])`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = run("run", "--demo", "--json", prog)
	if code != 0 || !strings.Contains(out, `"result":[2,3,"hello ada"]`) {
		t.Errorf("run with an upstream and a local script: exit %d\n%s", code, out)
	}
}
