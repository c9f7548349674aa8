package bindings_test

import (
	"context"
	"testing"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/store"
)

// TestSharedModules: a module sent to one replica is known by hash on
// another that shares the store; bytes that do not hash to the name are
// refused.
func TestSharedModules(t *testing.T) {
	st := store.NewMemory()
	a, b := bindings.NewSharedModuleStore(0, st), bindings.NewSharedModuleStore(0, st)
	mod := []byte("\x00asm\x01\x00\x00\x00")
	sha := a.Put(mod)
	got, ok, err := b.Fetch(sha)
	if err != nil || !ok || string(got) != string(mod) {
		t.Fatalf("Fetch on the other replica = %q, %v, %v", got, ok, err)
	}
	other := bindings.ModuleSHA256([]byte("other"))
	_ = st.Set(context.Background(), "mod:"+other, mod, time.Hour) // wrong bytes under a name
	if _, ok, _ := bindings.NewSharedModuleStore(0, st).Fetch(other); ok {
		t.Fatal("a module whose bytes do not match its hash was accepted")
	}
}
