package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/store/storetest"
)

func hexOf(c byte) string { return strings.Repeat(string(c), 64) }

// TestPinsShared: two replicas' pins sharing one store (in memory, and a
// real redis-server) agree: a file's pins are carried into the store; a
// first sight on one is the pin of the other; a pin made on one is seen by
// the other's Reload and Check; the file is not written. With Redis down,
// the pins known judge and the error is reported; once it is back, they
// work again.
func TestPinsShared(t *testing.T) {
	for _, name := range []string{"memory", "redis"} {
		t.Run(name, func(t *testing.T) {
			var st store.Store = store.NewMemory()
			var r *storetest.Redis
			if name == "redis" {
				r = storetest.StartRedis(t)
				var err error
				if st, err = store.Open(r.URL); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
			}
			path := filepath.Join(t.TempDir(), "pins.json")
			before := `{"version":2,"tools":{"s/x":{"hash":"` + hexOf('1') + `"}}}`
			if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
				t.Fatal(err)
			}
			a, err := OpenPins(path, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Share(st); err != nil {
				t.Fatal(err)
			}
			b := &Pins{}
			if err := b.Share(st); err != nil {
				t.Fatal(err)
			}
			// The file's pin, through the store.
			if ok, err := b.Check("s/x", hexOf('1')); !ok || err != nil {
				t.Fatalf("b, the file's pin: %v %v", ok, err)
			}
			if ok, _ := b.Check("s/x", hexOf('2')); ok || len(b.Pending()) != 1 {
				t.Fatalf("b, a changed definition: trusted (pending %v)", b.Pending())
			}
			// A first sight on a is b's pin.
			if ok, err := a.Check("s/y", hexOf('3')); !ok || err != nil {
				t.Fatalf("a, first sight: %v %v", ok, err)
			}
			if ok, _ := b.Check("s/y", hexOf('4')); ok {
				t.Fatal("b trusted another definition than the one a pinned")
			}
			// An approval on a re-enables on b.
			if changed, err := b.Reload(); changed || err != nil {
				t.Fatalf("b.Reload before any pin: %v %v", changed, err)
			}
			if old, err := a.Pin("s/x", hexOf('2')); err != nil || old != hexOf('1') {
				t.Fatalf("a.Pin: %q %v", old, err)
			}
			if changed, err := b.Reload(); !changed || err != nil {
				t.Fatalf("b.Reload after a's pin: %v %v", changed, err)
			}
			if ok, _ := b.Check("s/x", hexOf('2')); !ok || len(b.Pending()) != 1 {
				t.Fatalf("b after the approval: %v, pending %v", ok, b.Pending())
			}
			if changed, _ := b.Reload(); changed {
				t.Fatal("b.Reload reported the same change twice")
			}
			if got, _ := os.ReadFile(path); string(got) != before {
				t.Errorf("the pin file was written: %s", got)
			}
			if r == nil {
				return
			}
			r.Stop()
			if ok, err := b.Check("s/x", hexOf('2')); !ok || err == nil || !strings.Contains(err.Error(), "shared store") {
				t.Errorf("Redis down, a known pin: %v %v", ok, err)
			}
			if ok, err := b.Check("s/y", hexOf('5')); ok || err == nil {
				t.Errorf("Redis down, a changed definition: %v %v", ok, err)
			}
			if _, err := a.Pin("s/z", hexOf('6')); err == nil {
				t.Error("Redis down: Pin succeeded")
			}
			r.Start()
			if ok, err := b.Check("s/y", hexOf('3')); !ok || err != nil {
				t.Errorf("Redis back: %v %v", ok, err)
			}
		})
	}
}
