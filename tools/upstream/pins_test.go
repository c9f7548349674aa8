package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func hashOf(s string) string { return fmt.Sprintf("%064x", []byte(s)[:min(len(s), 32)]) }

func TestPinFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".sandcall", "pins.json")
	h1, h2 := hashOf("one"), hashOf("two")

	p, err := OpenPins(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := p.Check("up_echo", h1); !ok || err != nil {
		t.Fatalf("first sight = %v, %v", ok, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("pin file mode %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("pin dir mode %v, want 0700", di.Mode().Perm())
	}
	var pf pinFile
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &pf); err != nil || pf.Version != pinFileVersion || pf.Tools["up_echo"].Hash != h1 || pf.Tools["up_echo"].Pinned == "" {
		t.Fatalf("pin file = %s (%v)", b, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}

	// A restart: the pin survives, and a definition that changed meanwhile
	// is caught.
	p2, err := OpenPins(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := p2.Check("up_echo", h2); ok {
		t.Fatal("changed definition accepted after a restart")
	}
	if strings.Join(p2.Pending(), ",") != "up_echo" {
		t.Fatalf("pending = %v", p2.Pending())
	}

	// Another process (sandcall tools approve) pins h2; p2 picks it up.
	cli, err := OpenPins(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if old, err := cli.Pin("up_echo", h2); err != nil || old != h1 {
		t.Fatalf("Pin = %q, %v", old, err)
	}
	if changed, err := p2.Reload(); !changed || err != nil {
		t.Fatalf("Reload = %v, %v", changed, err)
	}
	if ok, _ := p2.Check("up_echo", h2); !ok || len(p2.Pending()) != 0 {
		t.Fatalf("approved definition rejected; pending %v", p2.Pending())
	}
	if changed, _ := p2.Reload(); changed {
		t.Fatal("Reload reported a change twice")
	}

	// Read-only pins trust new tools in memory and never write.
	ro, err := OpenPins(path, true)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if ok, _ := ro.Check("up_new", h1); !ok {
		t.Fatal("read-only: first sight rejected")
	}
	if ok, _ := ro.Check("up_echo", h1); ok {
		t.Fatal("read-only: changed definition accepted")
	}
	if _, err := ro.Pin("up_echo", h1); err == nil {
		t.Fatal("read-only: Pin wrote")
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatalf("read-only pins wrote the file:\n%s", after)
	}
}

func TestPinFileCorrupt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pins.json")
	h1, h2 := hashOf("one"), hashOf("two")
	p, err := OpenPins(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := p.Check("up_echo", h1); !ok {
		t.Fatal("first sight rejected")
	}
	for _, bad := range []string{
		`{not json`,
		`{"version":3,"tools":{}}`,
		`{"version":1,"tools":{"x":{"hash":"short"}}}`,
		`{"version":1,"tools":{},"extra":1}`,
		`{"version":1,"tools":{}} trailing`,
	} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenPins(path, false); !errors.Is(err, ErrPinFile) {
			t.Errorf("OpenPins(%s) = %v, want ErrPinFile", bad, err)
		}
		// A running process keeps its last good pins: it neither trusts the
		// changed definition nor forgets the pin.
		ok, err := p.Check("up_echo", h2)
		if ok || !errors.Is(err, ErrPinFile) {
			t.Errorf("%s: Check of a changed definition = %v, %v", bad, ok, err)
		}
		if _, err := p.Pin("up_other", h1); !errors.Is(err, ErrPinFile) {
			t.Errorf("%s: Pin over a corrupt file = %v", bad, err)
		}
		if b, _ := os.ReadFile(path); string(b) != bad {
			t.Errorf("%s: the corrupt file was overwritten", bad)
		}
	}
}

// TestPinFileConcurrentWriters pins different tools from two Pins on the
// same file at once (two processes, as serve and tools approve): the file
// lock keeps every pin.
func TestPinFileConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	a, _ := OpenPins(path, false)
	b, _ := OpenPins(path, false)
	var wg sync.WaitGroup
	for i, p := range []*Pins{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				if ok, err := p.Check(fmt.Sprintf("s_t%d_%d", i, j), hashOf("x")); !ok || err != nil {
					t.Errorf("Check = %v, %v", ok, err)
				}
			}
		}()
	}
	wg.Wait()
	c, err := OpenPins(path, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		for j := range 20 {
			if _, ok := c.Hash(fmt.Sprintf("s_t%d_%d", i, j)); !ok {
				t.Errorf("pin s_t%d_%d lost", i, j)
			}
		}
	}
}
