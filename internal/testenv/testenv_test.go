package testenv_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/internal/testenv"
)

// TestBinaryOncePerTree: the binary runs, a second call returns the same
// path, and it sits in a directory named after the tree's state.
func TestBinaryOncePerTree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sandcall")
	}
	bin, err := testenv.Binary()
	if err != nil {
		t.Fatal(err)
	}
	again, err := testenv.Binary()
	if err != nil || again != bin {
		t.Fatalf("second call: %q, %v; want %q", again, err, bin)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "sandcall ") {
		t.Fatalf("sandcall version: %q, %v", out, err)
	}
	if filepath.Base(filepath.Dir(filepath.Dir(bin))) != "sandcall-testbin" {
		t.Errorf("binary at %s: want it under the temp dir's sandcall-testbin", bin)
	}
	root, err := testenv.Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "sandcall", "main.go")); err != nil {
		t.Errorf("Root() = %s: %v", root, err)
	}
}
