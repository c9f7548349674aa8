package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigStrict(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "sandcall.yaml")
	if err := os.WriteFile(p, []byte("version: 1\nworkers: 2\npolcy: x.yaml\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := sandcall(t, "return 1", "run", "--config", p, "-")
	if code != 2 || !strings.Contains(stderr, p+":3:1: unknown key") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if err := os.WriteFile(p, []byte("version: 1\nauth: {tokens: [{sha256: hunter2, principal: a}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = sandcall(t, "return 1", "run", "--config", p, "-")
	if code != 2 || !strings.Contains(stderr, "sandcall token hash") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}
