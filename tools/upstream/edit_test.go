package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetEnabled(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, ".vscode", "mcp.json")
	orig := `{"inputs": [{"id": "x"}], "servers": {"b": {"command": "y", "x-custom": {"k": 1.50}}, "a": {"type": "http", "url": "http://h/mcp", "enabled": true}}, "mcpServers": {"a": {"command": "not-this-one"}}}`
	writeFile(t, path, orig)
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	cfg := Load(LoadConfig{Root: root})
	a, ok := cfg.Lookup("a")
	if !ok || a.Key != "servers" {
		t.Fatalf("a = %+v", a)
	}
	changed, err := SetEnabled(a, false)
	if err != nil || !changed {
		t.Fatalf("disable = %v, %v", changed, err)
	}
	b, _ := os.ReadFile(path)
	got := string(b)
	// Keys keep their order, unknown keys and number spellings stay, and
	// only a's "enabled" changed.
	for _, want := range []string{`"inputs"`, `"x-custom": {`, `"k": 1.50`, `"command": "not-this-one"`, `"enabled": false`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
	if strings.Index(got, `"inputs"`) > strings.Index(got, `"servers"`) || strings.Index(got, `"b"`) > strings.Index(got, `"a"`) {
		t.Errorf("key order changed:\n%s", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", fi.Mode().Perm())
	}
	cfg = Load(LoadConfig{Root: root})
	if a, _ := cfg.Lookup("a"); a.Enabled {
		t.Fatal("a still enabled after disable")
	}
	if b, _ := cfg.Lookup("b"); !b.Enabled || b.Err != nil {
		t.Fatalf("b = %+v", b)
	}
	if changed, err := SetEnabled(a, false); changed || err != nil {
		t.Fatalf("disable again = %v, %v", changed, err)
	}
	if changed, err := SetEnabled(a, true); !changed || err != nil {
		t.Fatalf("enable = %v, %v", changed, err)
	}
	b2, _ := os.ReadFile(path)
	if strings.Contains(string(b2), `"enabled"`) {
		t.Fatalf("enable left the key:\n%s", b2)
	}
	cfg = Load(LoadConfig{Root: root})
	if a, _ := cfg.Lookup("a"); !a.Enabled {
		t.Fatal("a not enabled again")
	}
	// A file that is no longer a JSON object is an error, and is not touched.
	writeFile(t, path, `[1]`)
	if _, err := SetEnabled(a, false); err == nil {
		t.Fatal("no error on a non-object file")
	}
}
