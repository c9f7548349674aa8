package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolsLintDemo: every tool sandcall ships (the demo toolsets and the
// discovery tools) meets the catalog standard: no errors, no warnings.
func TestToolsLintDemo(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := sandcallIn(t, t.TempDir(), nil, "tools", "lint", "--demo")
	if code != 0 || stdout != "" || !strings.Contains(stderr, " 0 errors, 0 warnings") {
		t.Fatalf("tools lint --demo: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestToolsLintFindings lints local script tools and an upstream server:
// a local script's error carries its file:line and fails the command; the
// upstream's findings are warnings.
func TestToolsLintFindings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tools := filepath.Join(dir, ".agents", "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n\n# @description Does things.\n# @param x string\necho '{}'\n"
	if err := os.WriteFile(filepath.Join(tools, "DoThings"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := sandcallIn(t, dir, nil, "tools", "lint", "--trust-project")
	want := filepath.Join(".agents", "tools", "DoThings") + ":3: error: DoThings: the name \"DoThings\" is not snake case [name-form]"
	if code != 1 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "\n  fix: Name the tool in snake case") {
		t.Fatalf("exit %d, want 1 and %q\nstdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
	}

	// The same project with sandcall itself as an upstream server: its
	// tools reach the catalog as demo_<tool>, and nothing they break is an
	// error of this project.
	if err := os.Remove(filepath.Join(tools, "DoThings")); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": demoBin, "args": []string{"serve", "--demo"}}}})
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := sandcallIn(t, dir, nil, "servers", "trust"); code != 0 {
		t.Fatalf("servers trust: exit %d\n%s%s", code, out, errOut)
	}
	stdout, stderr, code = sandcallIn(t, dir, nil, "tools", "lint", "--json")
	var fs []struct {
		Tool, Rule, Level, Message, Hint, Pos string
	}
	if err := json.Unmarshal([]byte(stdout), &fs); err != nil {
		t.Fatalf("exit %d, stdout not JSON: %v\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	upstream := 0
	for _, f := range fs {
		if strings.HasPrefix(f.Tool, "demo_") {
			upstream++
		}
		if f.Level != "warning" || f.Rule == "" || f.Hint == "" {
			t.Errorf("finding %+v: want a warning with a rule and a hint", f)
		}
	}
	// MCP carries neither examples nor output budgets: the upstream's tools
	// have at least those findings.
	if code != 0 || upstream == 0 {
		t.Fatalf("exit %d, %d findings on upstream tools; want 0 and some\n%s", code, upstream, stdout)
	}
}
