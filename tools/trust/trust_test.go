package trust_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/tools/trust"
)

// TestRecordIsPerProjectPath: trust given to one checkout is not the
// trust of a copy of it elsewhere, nor of the same files reached through
// a link (the canonical path is the same project).
func TestRecordIsPerProjectPath(t *testing.T) {
	state := t.TempDir()
	a := t.TempDir()
	b := t.TempDir()
	p, err := trust.OpenIn(state, a)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Empty() {
		t.Fatal("a new project is trusted")
	}
	p.SetScripts(map[string]string{".agents/tools/x": "h1"})
	p.SetServers(map[string]trust.Server{".mcp.json#m": {Definition: "d"}})
	p.SetFollowScripts(true)
	if err := p.Save(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p.File())
	if err != nil || fi.Mode().Perm() != 0o600 || !strings.HasPrefix(p.File(), state) {
		t.Fatalf("record %s: %v %v", p.File(), fi, err)
	}
	other, _ := trust.OpenIn(state, b)
	if !other.Empty() {
		t.Error("another directory shares the trust")
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	same, _ := trust.OpenIn(state, link)
	if h, ok := same.Script(".agents/tools/x"); !ok || h != "h1" || !same.FollowScripts() {
		t.Errorf("the project through a link: %q %v", h, ok)
	}

	// A record copied to another project's name is not its trust.
	data, _ := os.ReadFile(p.File())
	if err := os.WriteFile(other.File(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := other.Reload(); err != nil || !other.Empty() {
		t.Errorf("a copied record is trusted: %v", err)
	}
}

// TestReloadSeesAnotherWriter: a running server picks up trust given
// meanwhile by `sandcall servers trust`.
func TestReloadSeesAnotherWriter(t *testing.T) {
	state, root := t.TempDir(), t.TempDir()
	serving, _ := trust.OpenIn(state, root)
	cmd, _ := trust.OpenIn(state, root)
	cmd.SetScripts(map[string]string{"s": "h"})
	if err := cmd.Save(); err != nil {
		t.Fatal(err)
	}
	if _, ok := serving.Script("s"); ok {
		t.Fatal("seen before Reload")
	}
	if err := serving.Reload(); err != nil {
		t.Fatal(err)
	}
	if h, ok := serving.Script("s"); !ok || h != "h" {
		t.Errorf("after Reload: %q %v", h, ok)
	}
}

func TestCorruptRecord(t *testing.T) {
	state, root := t.TempDir(), t.TempDir()
	p, _ := trust.OpenIn(state, root)
	if err := os.MkdirAll(filepath.Dir(p.File()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.File(), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := trust.OpenIn(state, root); err == nil || !strings.Contains(err.Error(), "servers trust") {
		t.Errorf("corrupt record: %v", err)
	}
}

func TestServerChanges(t *testing.T) {
	old := trust.Server{Definition: "d1", Executable: "/usr/bin/sh", Files: map[string]string{"start.sh": "a", "gone.txt": "g"}}
	now := trust.Server{Definition: "d1", Executable: "/tmp/sh", Files: map[string]string{"start.sh": "b", "new.sh": "n"}}
	got := now.Changes(old)
	want := []string{"its command now runs /tmp/sh (was /usr/bin/sh)", "it now runs or names new.sh", "start.sh changed", "it no longer names gone.txt"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Changes = %q\nwant %q", got, want)
	}
	if c := old.Changes(old); len(c) != 0 {
		t.Errorf("no change: %q", c)
	}
}

func TestStateDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if d, _ := trust.StateDir(); d != "/x/state/sandcall" {
		t.Errorf("StateDir = %q", d)
	}
	t.Setenv("XDG_STATE_HOME", "relative") // not absolute: ignored, as the spec says
	t.Setenv("HOME", "/home/u")
	if d, _ := trust.StateDir(); d != "/home/u/.local/state/sandcall" {
		t.Errorf("StateDir = %q", d)
	}
}
