package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// copyTree copies the directory src to a new temp dir, modes kept.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestConventionScripts runs scripts written to the .agents/tools
// convention (testdata/convention) unchanged through `sandcall run`: bash
// under set -u that starts with cd "$OCTOMIND_WORKDIR", node reading stdin,
// and one that needs a token from the developer's environment, passed by
// --env or by env_passthrough in sandcall.yaml (and missing otherwise). A
// script named search_tools does not replace the built-in, and tools check
// reports it.
func TestConventionScripts(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("skipped: node is not installed (one of the scripts is a node script)")
	}
	dir := copyTree(t, filepath.Join("testdata", "convention"))
	prog := filepath.Join(dir, "prog.js")
	src := `const files = await tools.project_files({pattern: "notes"});
const sum = await tools.sum_values({values: [1, 2, 3.5]});
const api = await tools.call_api({endpoint: "/v1/items"});
const found = await tools.search_tools({query: "sum numbers"});
return {files, sum, api, found: found.tools.map(t => t.name)};`
	if err := os.WriteFile(prog, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"run", "--trust-project", "--isolation", "inprocess"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(testEnv(), env...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		return o.String(), e.String(), err
	}
	check := func(how, out, errOut string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v\n%s%s", how, err, out, errOut)
		}
		var got struct {
			Files any      `json:"files"`
			Sum   any      `json:"sum"`
			API   string   `json:"api"`
			Found []string `json:"found"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s: %q: %v", how, out, err)
		}
		if s, _ := json.Marshal(got.Files); !strings.Contains(string(s), "docs/notes.md") || strings.Contains(string(s), "other.txt") {
			t.Errorf("%s: project_files = %s", how, s)
		}
		if s, _ := json.Marshal(got.Sum); !strings.Contains(string(s), "6.5") {
			t.Errorf("%s: sum_values = %s", how, s)
		}
		if !strings.Contains(got.API, "call_api called /v1/items with a token of 9 characters") {
			t.Errorf("%s: call_api = %q", how, got.API)
		}
		if !strings.Contains(strings.Join(got.Found, ","), "sum_values") {
			t.Errorf("%s: search_tools (the built-in) found %v", how, got.Found)
		}
	}
	token := "DEMO_API_TOKEN=tok-12345"
	out, errOut, err := run([]string{token}, "--env", "DEMO_API_TOKEN", prog)
	check("--env", out, errOut, err)
	if !strings.Contains(errOut, "search_tools") || !strings.Contains(errOut, "built-in") {
		t.Errorf("the search_tools script's collision is not reported:\n%s", errOut)
	}

	cfg := filepath.Join(dir, "sandcall.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\nenv_passthrough: [DEMO_API_TOKEN]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err = run([]string{token}, prog)
	check("env_passthrough", out, errOut, err)
	os.Remove(cfg)

	// Not passed: the script fails with its own message, and the
	// environment variable never leaks by default.
	out, errOut, err = run([]string{token}, prog)
	if err == nil || !strings.Contains(errOut, "DEMO_API_TOKEN is not set") {
		t.Errorf("without --env: %v\n%s%s", err, out, errOut)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "tools", "check")
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "skip search_tools: collision: search_tools is a built-in tool") {
		t.Errorf("tools check: %v\n%s", err, b)
	}
	for _, ok := range []string{"ok project_files", "ok sum_values", "ok call_api"} {
		if !strings.Contains(string(b), ok) {
			t.Errorf("tools check does not say %q:\n%s", ok, b)
		}
	}

	// Declared effects reach the policy: the default one keeps a
	// destructive tool away from programs.
	wipe := "#!/bin/sh\n# @description Deletes the scratch directory.\n# @destructive\nrm -rf scratch\n"
	if err := os.WriteFile(filepath.Join(dir, ".agents/tools/wipe"), []byte(wipe), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd = exec.CommandContext(ctx, bin, "tools", "list", "--trust-project", "--json")
	cmd.Dir = dir
	b, err = cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var rows []toolRow
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	callers := map[string]string{}
	for _, r := range rows {
		callers[r.Name] = strings.Join(r.Callers, ",")
	}
	if callers["wipe"] != "direct" || !strings.Contains(callers["project_files"], "code") {
		t.Errorf("callers: wipe %q (want direct only: @destructive), project_files %q (want code too: @readonly)", callers["wipe"], callers["project_files"])
	}
}
