package upstream

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOtherClientsForms: Cursor's url-only entry is http; VS Code's JSONC
// (comments, trailing commas), ${workspaceFolder}, ${env:VAR} and envFile
// are understood, ${input:…} is an error that says what to do; a wrong
// type reads in the file's terms.
func TestOtherClientsForms(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".cursor", "mcp.json"), `{"mcpServers": {"remote": {"url": "https://example.com/mcp"}}}`)
	writeFile(t, filepath.Join(root, ".env"), "# secrets\nexport API_KEY=\"k-123\"\nOTHER=2\n")
	writeFile(t, filepath.Join(root, ".vscode", "mcp.json"), `{
  // VS Code keeps comments in its JSON
  "inputs": [{"type": "promptString", "id": "tok"}],
  "servers": {
    "files": {
      "command": "node",
      "args": ["${workspaceFolder}/server.js", "${env:HOME_DIR}"], /* trailing comment */
      "envFile": "${workspaceFolder}/.env",
      "env": {"OTHER": "explicit"},
    },
    "prompted": {"command": "x", "env": {"TOKEN": "${input:tok}"}},
    "typo": {"command": "x", "enabled": "yes"},
  },
}`)
	cfg := Load(LoadConfig{Root: root, LookupEnv: env(map[string]string{"HOME_DIR": "/home/ada"})})
	remote, _ := cfg.Lookup("remote")
	if remote.Err != nil || remote.Type != TypeHTTP || remote.Server.Type != TypeHTTP {
		t.Errorf("cursor url-only: %+v", remote)
	}
	files, _ := cfg.Lookup("files")
	if files.Err != nil {
		t.Fatalf("files: %v (warnings %v)", files.Err, cfg.Warnings)
	}
	ws, _ := filepath.Abs(root)
	if got := files.Server.Args; len(got) != 2 || got[0] != ws+"/server.js" || got[1] != "/home/ada" {
		t.Errorf("args = %q", got)
	}
	if e := files.Server.Env; e["API_KEY"] != "k-123" || e["OTHER"] != "explicit" {
		t.Errorf("env = %v", e)
	}
	prompted, _ := cfg.Lookup("prompted")
	if prompted.Err == nil || !strings.Contains(prompted.Err.Error(), "VS Code's own inputs") || !strings.Contains(prompted.Err.Error(), "${env:NAME}") {
		t.Errorf("input: %v", prompted.Err)
	}
	typo, _ := cfg.Lookup("typo")
	if typo.Err == nil || !strings.Contains(typo.Err.Error(), `"enabled" must be true or false`) || strings.Contains(typo.Err.Error(), "rawServer") {
		t.Errorf("typo: %v", typo.Err)
	}
}

// TestSetEnabledKeepsLayout: disable and enable edit the bytes of a JSONC
// file: comments, spacing and order survive, and the round trip gives the
// original back.
func TestSetEnabledKeepsLayout(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, ".vscode", "mcp.json")
	orig := `{
  // my servers
  "servers": {
    "a": {
      "command": "x",   // aligned comment
      "args": ["1.50"]
    },
    "b": {"url": "http://h/mcp",},
  }
}
`
	writeFile(t, path, orig)
	for _, name := range []string{"a", "b"} {
		e, _ := Load(LoadConfig{Root: root}).Lookup(name)
		if changed, err := SetEnabled(e, false); !changed || err != nil {
			t.Fatalf("disable %s: %v %v", name, changed, err)
		}
	}
	b, _ := os.ReadFile(path)
	got := string(b)
	want := strings.Replace(orig, "{\n      \"command\"", "{\n      \"enabled\": false,\n      \"command\"", 1)
	want = strings.Replace(want, `"b": {"url"`, `"b": {"enabled": false, "url"`, 1)
	if got != want {
		t.Errorf("after disable:\n%s\nwant:\n%s", got, want)
	}
	for _, name := range []string{"a", "b"} {
		e, _ := Load(LoadConfig{Root: root}).Lookup(name)
		if e.Enabled {
			t.Errorf("%s still enabled", name)
		}
		if changed, err := SetEnabled(e, true); !changed || err != nil {
			t.Fatalf("enable %s: %v %v", name, changed, err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != orig {
		t.Errorf("enable did not give the original back:\n%s", b)
	}
}

// FuzzStripJSONC: the output has the input's length, and valid JSON (which
// has neither comments nor trailing commas) comes back unchanged.
func FuzzStripJSONC(f *testing.F) {
	for _, s := range []string{`{"a": "//not a comment", "b": [1, 2,], /* c */ "d": "\"/*"}`, `{"x": 1} // end`, `[1,]`, `"\\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := stripJSONC([]byte(s))
		if len(out) != len(s) {
			t.Fatalf("length %d, want %d", len(out), len(s))
		}
		if json.Valid([]byte(s)) && string(out) != s {
			t.Fatalf("valid JSON changed: %q → %q", s, out)
		}
	})
}
