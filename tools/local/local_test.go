package local

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcall/sandcall/tools"
)

func TestLoadFindings(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "good", "echo 1")
	files := map[string]struct {
		src  string
		mode os.FileMode
	}{
		"nodesc":   {"#!/bin/sh\n# @param x string\n", 0o755},
		"badparam": {"#!/bin/sh\n# @description d\n# @param x strng\n", 0o755},
		"has.dot":  {"#!/bin/sh\n# @description d\n", 0o755},
		"noexec":   {"#!/bin/sh\n# @description d\n", 0o644},
		"bad-name": {"#!/bin/sh\n# @description d\n", 0o755},
		".hidden":  {"whatever", 0o644},
	}
	for name, f := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(f.src), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, fs := Load(Config{Dir: dir})
	var got []string
	for _, f := range fs {
		if (f.Reason != "") != f.Error {
			t.Errorf("%s: Error = %v", f, f.Error)
		}
		got = append(got, f.String())
	}
	want := []string{
		"skip bad-name: a hyphen in the name: tool names are [A-Za-z_][A-Za-z0-9_]* (rename it to bad_name)",
		"skip badparam: parameter x: unknown type \"strng\"",
		"ok good",
		"skip has.dot: a dot in the name",
		"skip nodesc: no @description",
		"skip noexec: not executable",
	}
	if len(got) != len(want) {
		t.Fatalf("findings:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("finding %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
	if !strings.HasSuffix(got[1], "(line 3)") {
		t.Errorf("no line: %q", got[1])
	}
	if ts := s.Tools(); len(ts) != 1 || ts[0].Name != "good" || ts[0].Source != "local" || ts[0].Effects != (tools.Effects{}) {
		t.Errorf("tools = %+v", ts)
	}
}

func TestCollision(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "ping", "echo 1")
	writeScript(t, dir, "other", "echo 2")
	builtin := &tools.Tool{Name: "ping", Description: "builtin", Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"pong"`), nil
	}}
	cat, err := tools.NewCatalog(builtin)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := Load(Config{Dir: dir})
	fs := s.AddTo(cat)
	if len(fs) != 1 || !strings.Contains(fs[0].Reason, "collision") || !fs[0].Error {
		t.Fatalf("findings = %v", fs)
	}
	if got, _ := cat.Lookup("ping"); got != builtin {
		t.Error("the builtin ping was replaced")
	}
	if _, ok := cat.Lookup("other"); !ok {
		t.Error("other missing")
	}
	// Changing the colliding script must not remove the builtin.
	writeScript(t, dir, "ping", "echo 3 # changed")
	s.Reload()
	if got, _ := cat.Lookup("ping"); got != builtin {
		t.Error("the builtin ping was replaced on reload")
	}
}

func TestWatch(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "keep", "echo 1")
	writeScript(t, dir, "gone", "echo 1")
	writeScript(t, dir, "change", `echo '"v1"'`)
	var mu sync.Mutex
	var reports []Finding
	s, _ := Load(Config{Dir: dir, Report: func(f Finding) { mu.Lock(); reports = append(reports, f); mu.Unlock() }})
	cat, _ := tools.NewCatalog()
	s.AddTo(cat)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Watch(ctx, 10*time.Millisecond)
	// Calls run concurrently with reloads (for -race).
	go func() {
		for ctx.Err() == nil {
			if tool, ok := cat.Lookup("keep"); ok {
				_, _ = tool.Call(ctx, []byte(`{"s":""}`))
			}
		}
	}()

	keep, _ := cat.Lookup("keep")
	if err := os.Remove(filepath.Join(dir, "gone")); err != nil {
		t.Fatal(err)
	}
	writeScript(t, dir, "added", "echo 1")
	writeScript(t, dir, "change", `echo '"v2 longer"'`)
	if err := os.WriteFile(filepath.Join(dir, "broken"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		_, g := cat.Lookup("gone")
		_, a := cat.Lookup("added")
		return !g && a
	})
	waitFor(t, func() bool {
		tool, ok := cat.Lookup("change")
		if !ok {
			return false
		}
		res, err := tool.Call(ctx, []byte(`{"s":""}`))
		return err == nil && string(res) == `"v2 longer"`
	})
	if k, _ := cat.Lookup("keep"); k != keep {
		t.Error("an unchanged tool was replaced")
	}
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range reports {
			if f.File == "broken" && strings.Contains(f.Reason, "no @description") {
				return true
			}
		}
		return false
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
