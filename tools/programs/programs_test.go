package programs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/local"
)

func write(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const good = "// @description Counts things.\n// @param *what string what to count\n// @idempotent\nreturn (await tools.count({what: args.what})).n;\n"

func TestLoadDirFindings(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "count_things.js", good)
	write(t, dir, "typed.ts", "// @description Typed.\nconst n: number = 1;\nreturn n + (await tools.x({}));\n")
	write(t, dir, "notes.txt", "hi")
	write(t, dir, "bad-name.js", good)
	write(t, dir, "no_header.js", "return 1;\n")
	write(t, dir, "broken.js", "// @description Broken.\nreturn (;\n")
	write(t, dir, "taken.js", good)
	write(t, dir, "untrusted.js", good)
	write(t, dir, ".hidden.js", good)
	reg := NewRegistry()
	d, finds := LoadDir(reg, DirConfig{Dir: dir,
		Reserved: func(n string) string {
			if n == "taken" {
				return "a tool named taken already exists"
			}
			return ""
		},
		Trusted: func(p, _ string) bool { return filepath.Base(p) != "untrusted.js" }})
	got := map[string]string{}
	for _, f := range finds {
		got[f.File] = f.Reason
	}
	want := map[string]string{
		"count_things.js": "",
		"typed.ts":        "",
		"notes.txt":       "not a program",
		"bad-name.js":     "the name is not a tool name",
		"no_header.js":    "no @description",
		"broken.js":       "does not parse: line 2",
		"taken.js":        "collision: a tool named taken",
		"untrusted.js":    UntrustedReason,
	}
	if len(got) != len(want) {
		t.Errorf("findings %v", got)
	}
	for f, w := range want {
		if r, ok := got[f]; !ok || (w == "" && r != "") || !strings.HasPrefix(r, w) {
			t.Errorf("%s: %q, want %q", f, r, w)
		}
	}
	ts := d.Tools()
	if len(ts) != 2 || ts[0].Name != "count_things" || ts[1].Name != "typed" {
		t.Fatalf("tools %v", ts)
	}
	p, ok := reg.Of(ts[0])
	if !ok || p.Origin != SourceFile || !p.Effects.Idempotent || p.Plan.Names()[0] != "count" || p.Language != sandbox.JavaScript ||
		!strings.HasSuffix(p.Pos, "count_things.js:1") || len(p.SHA256) != 64 {
		t.Fatalf("program %+v", p)
	}
	if err := ts[0].Validate(json.RawMessage(`{}`)); err == nil {
		t.Fatal("the required parameter is not required")
	}
	if p, _ := reg.Of(ts[1]); p.Language != sandbox.TypeScript || p.Plan.Tools[0].Line != 3 {
		t.Fatalf("typescript %+v", p)
	}
}

type echoRunner struct{}

func (echoRunner) RunProgram(_ context.Context, p *Program, args json.RawMessage) (json.RawMessage, error) {
	return json.Marshal(map[string]any{"program": p.Name, "version": p.Version(), "args": args})
}

// TestDirReload: an edited program is a new version (the tool is
// replaced, trust is asked again), a removed one is removed.
func TestDirReload(t *testing.T) {
	dir := t.TempDir()
	path := write(t, dir, "count_things.js", good)
	trusted := map[string]bool{}
	// Trust is by the content the tool is made from: the sum the loader
	// passes, never a second read of the file.
	trust := func(_, sum string) bool { return trusted[sum] }
	trusted[sumOf(good)] = true
	reg := NewRegistry()
	reg.SetRunner(echoRunner{})
	d, _ := LoadDir(reg, DirConfig{Dir: dir, Trusted: trust, Report: func(local.Finding) {}})
	cat, _ := tools.NewCatalog()
	d.AddTo(cat)
	call := func() string {
		tl, ok := cat.Lookup("count_things")
		if !ok {
			return ""
		}
		out, err := tl.Call(context.Background(), json.RawMessage(`{"what":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	v1 := call()
	if !strings.Contains(v1, `"program":"count_things"`) {
		t.Fatalf("v1 %s", v1)
	}
	edited := strings.Replace(good, "Counts things.", "Counts things twice.", 1)
	write(t, dir, "count_things.js", edited)
	d.Reload()
	if call() != "" {
		t.Fatal("an edited, untrusted program is still a tool")
	}
	trusted[sumOf(edited)] = true
	d.Reload()
	v2 := call()
	if v2 == "" || v2 == v1 {
		t.Fatalf("the trusted edit: %s (was %s)", v2, v1)
	}
	if len(reg.Programs()) != 1 {
		t.Fatalf("the registry keeps %d programs", len(reg.Programs()))
	}
	os.Remove(path)
	d.Reload()
	if _, ok := cat.Lookup("count_things"); ok || len(reg.Programs()) != 0 {
		t.Fatal("a removed program is still a tool")
	}
}

// TestSavedSync: Sync adds what another replica saved and removes what
// was deleted; a record tampered with in the store does not load.
func TestSavedSync(t *testing.T) {
	st := store.NewMemory()
	reg := NewRegistry()
	s := NewSaved(reg, SavedConfig{Store: st})
	cat, _ := tools.NewCatalog()
	s.AddTo(cat)
	ctx := context.Background()
	other := NewSaved(NewRegistry(), SavedConfig{Store: st})
	other.AddTo(func() *tools.Catalog { c, _ := tools.NewCatalog(); return c }())
	if _, err := other.Save(ctx, "alice", SaveRequest{Name: "p1", Description: "One.", Code: "return 1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	tl, ok := cat.Lookup("p1")
	if !ok {
		t.Fatal("p1 not synced")
	}
	if p, _ := reg.Of(tl); p.Owner != "alice" || p.Origin != SourceSaved {
		t.Fatalf("program %+v", p)
	}
	// Tampered: the code no longer matches its hash.
	b, _ := st.SpaceGet(ctx, savedNS, "p1")
	var r record
	_ = json.Unmarshal(b, &r)
	r.Code = "return await tools.send_everything({})"
	b, _ = json.Marshal(r)
	_ = st.SpacePut(ctx, savedNS, "p1", b, 0, store.Quota{})
	_ = st.SpacePut(ctx, savedNS, genKey, []byte("changed"), 0, store.Quota{})
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := cat.Lookup("p1"); ok {
		t.Fatal("a tampered program was loaded")
	}
	// Limits per principal.
	small := NewSaved(NewRegistry(), SavedConfig{Store: store.NewMemory(), MaxPerPrincipal: 1})
	c2, _ := tools.NewCatalog()
	small.AddTo(c2)
	if _, err := small.Save(ctx, "bob", SaveRequest{Name: "a", Description: "A.", Code: "return 1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := small.Save(ctx, "bob", SaveRequest{Name: "a", Description: "A.", Code: "return 2"}); err != nil {
		t.Fatalf("replacing within the limit: %v", err)
	}
	if _, err := small.Save(ctx, "bob", SaveRequest{Name: "b", Description: "B.", Code: "return 1"}); err == nil {
		t.Fatal("a second program past the limit was saved")
	}
	if _, err := small.Save(ctx, "carol", SaveRequest{Name: "b", Description: "B.", Code: "return 1"}); err != nil {
		t.Fatalf("another principal: %v", err)
	}
}

func sumOf(src string) string {
	h := sha256.Sum256([]byte(src))
	return hex.EncodeToString(h[:])
}
