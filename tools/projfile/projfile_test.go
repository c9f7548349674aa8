package projfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sandcall/sandcall/tools/projfile"
)

// TestReadRefuses: what a repository can put where sandcall reads a file
// (a link to /dev/zero, a FIFO nobody writes, a link to a file outside the
// project, a directory, a huge file) is refused with an error that says
// why, and nothing blocks.
func TestReadRefuses(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "id_ed25519")
	write(t, secret, "PRIVATE")
	write(t, filepath.Join(root, "ok.json"), `{"a":1}`)
	write(t, filepath.Join(root, "big"), string(make([]byte, 2048)))
	must(t, os.Symlink("/dev/zero", filepath.Join(root, "zero")))
	must(t, os.Symlink(secret, filepath.Join(root, "key")))
	must(t, os.Symlink("ok.json", filepath.Join(root, "inner-link")))
	must(t, os.Mkdir(filepath.Join(root, "dir"), 0o755))
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	cases := []struct {
		name string
		root string
		want error
	}{
		{"zero", root, projfile.ErrOutside},
		{"zero", "", projfile.ErrNotRegular}, // the operator's file: links may leave, devices may not
		{"fifo", root, projfile.ErrNotRegular},
		{"key", root, projfile.ErrOutside},
		{"dir", root, projfile.ErrNotRegular},
		{"big", root, projfile.ErrTooLarge},
		{"missing", root, os.ErrNotExist},
		{"ok.json", root, nil},
		{"inner-link", root, nil},
	}
	for _, tc := range cases {
		p := filepath.Join(root, tc.name)
		b, err := projfile.Read(p, 1024, tc.root)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("Read(%s, root %q) = %q, %v; want %v", tc.name, tc.root, b, err, tc.want)
		}
		if tc.want == nil && string(b) != `{"a":1}` {
			t.Errorf("Read(%s) = %q", tc.name, b)
		}
		_, herr := projfile.Hash(p, 1024, tc.root)
		if !errors.Is(herr, tc.want) {
			t.Errorf("Hash(%s, root %q) = %v; want %v", tc.name, tc.root, herr, tc.want)
		}
		if err != nil && tc.name == "key" && strings.Contains(err.Error(), "PRIVATE") {
			t.Errorf("the error shows the file: %v", err)
		}
	}
}

// TestHashSeesContent: a same-size rewrite with the modification time put
// back has another hash.
func TestHashSeesContent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s")
	write(t, p, "echo a\n")
	fi, _ := os.Stat(p)
	h1, err := projfile.Hash(p, 1<<20, "")
	must(t, err)
	write(t, p, "echo b\n")
	must(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
	h2, err := projfile.Hash(p, 1<<20, "")
	must(t, err)
	if h1 == h2 || h1 != projfile.Sum([]byte("echo a\n")) {
		t.Errorf("hashes %s %s", h1, h2)
	}
}

func TestRelAndWithin(t *testing.T) {
	if got := projfile.Rel("/p/r", "/p/r/.mcp.json"); got != ".mcp.json" {
		t.Errorf("Rel = %q", got)
	}
	if got := projfile.Rel("/p/r", "/p/rx/a"); got != "/p/rx/a" {
		t.Errorf("Rel outside = %q", got)
	}
	if projfile.Within("/p/r", "/p/rx") || !projfile.Within("/p/r", "/p/r/x") || !projfile.Within("/", "/a") {
		t.Error("Within")
	}
}

func TestWriteAtomic(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	must(t, projfile.WriteAtomic(p, []byte("one"), 0o600))
	must(t, projfile.WriteAtomic(p, []byte("two"), 0o600))
	b, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(b) != "two" || fi.Mode().Perm() != 0o600 {
		t.Errorf("%q %v", b, fi.Mode())
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	must(t, os.WriteFile(p, []byte(s), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
