package local

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConventionEnvironment: a script written to the .agents/tools
// convention (set -u, cd "$OCTOMIND_WORKDIR", $OCTOMIND_TOOL_NAME) runs
// unchanged, and a variable named in Config.Env reaches it while others of
// sandcall's environment do not.
func TestConventionEnvironment(t *testing.T) {
	dir := t.TempDir()
	root := t.TempDir()
	src := "#!/usr/bin/env bash\n# @description Reports where it runs.\n# @param *who string someone\nset -euo pipefail\ncd \"$OCTOMIND_WORKDIR\"\n" +
		`printf '{"tool":"%s","pwd":"%s","who":"%s","token":"%s","other":"%s"}' "$OCTOMIND_TOOL_NAME" "$(pwd -P)" "$OCTOMIND_PARAM_WHO" "${DEMO_TOKEN:-}" "${OTHER_SECRET:-}"` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "where"), []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DEMO_TOKEN", "tok-123")
	t.Setenv("OTHER_SECRET", "must-not-pass")
	tl := loadOne(t, Config{Dir: dir, Root: root, Env: []string{"DEMO_TOKEN"}}, "where")
	out, err := tl.Handler(context.Background(), json.RawMessage(`{"who":"ada"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	realRoot, _ := filepath.EvalSymlinks(root)
	want := map[string]string{"tool": "where", "pwd": realRoot, "who": "ada", "token": "tok-123", "other": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// TestHeaderEffects: @readonly, @destructive and @idempotent reach the
// tool's effects; @readonly with @destructive is refused.
func TestHeaderEffects(t *testing.T) {
	for _, tc := range []struct {
		tags            string
		ro, destr, idem bool
		wantErr         string
	}{
		{"# @readonly\n# @idempotent\n", true, false, true, ""},
		{"# @destructive\n", false, true, false, ""},
		{"", false, false, false, ""},
		{"# @readonly\n# @destructive\n", false, false, false, "contradict"},
	} {
		h, err := ParseHeader([]byte("#!/bin/sh\n# @description D.\n" + tc.tags + "echo\n"))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want %q", tc.tags, err, tc.wantErr)
			}
			continue
		}
		if err != nil || h.ReadOnly != tc.ro || h.Destructive != tc.destr || h.Idempotent != tc.idem {
			t.Errorf("%q: %+v %v", tc.tags, h, err)
		}
	}
	dir := t.TempDir()
	src := "#!/bin/sh\n# @description Lists things.\n# @readonly\n# @idempotent\necho '[]'\n"
	if err := os.WriteFile(filepath.Join(dir, "lister"), []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	tl := loadOne(t, Config{Dir: dir}, "lister")
	if e := tl.Effects; !e.ReadOnly || e.Destructive || !e.Idempotent {
		t.Errorf("effects %+v, want read-only and idempotent", e)
	}
}

// TestCallTimeMistakes: what would fail only at call time is a finding at
// load (and so in `tools check`): no #!, CRLF line endings, a hyphen in
// the name (with the fixed name), a reserved name; odd file names are
// printed escaped.
func TestCallTimeMistakes(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"nohash":         "# @description No interpreter line.\necho 1\n",
		"crlf":           "#!/bin/sh\r\n# @description Windows line endings.\r\necho 1\r\n",
		"my-tool":        "#!/bin/sh\n# @description Hyphen.\necho 1\n",
		"run_code":       "#!/bin/sh\n# @description Wants to be run_code.\necho 1\n",
		"odd\x1b[2Jname": "#!/bin/sh\n# @description Escape codes in the name.\necho 1\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reserved := func(n string) string {
		if n == "run_code" {
			return "run_code is a built-in tool"
		}
		return ""
	}
	_, fs := Load(Config{Dir: dir, Reserved: reserved})
	got := map[string]string{}
	for _, f := range fs {
		got[f.File] = f.String()
		if !f.Error {
			t.Errorf("%s: not an error", f)
		}
	}
	for name, want := range map[string]string{
		"nohash":   "no #! line",
		"crlf":     "CRLF line endings",
		"my-tool":  "rename it to my_tool",
		"run_code": "collision: run_code is a built-in tool",
	} {
		if !strings.Contains(got[name], want) {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if s := got["odd\x1b[2Jname"]; strings.ContainsRune(s, 0x1b) || !strings.Contains(s, `"odd\x1b[2Jname"`) {
		t.Errorf("odd name printed as %q, want it escaped", s)
	}
}
