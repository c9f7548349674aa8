package bindings_test

import (
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/store"
)

// TestSharedModules: a module sent to one replica is known by hash on
// another that shares the store — to the principal that sent it, and to
// no one else (the binding holds across replicas).
func TestSharedModules(t *testing.T) {
	st := store.NewMemory()
	a, b := bindings.NewSharedModuleStore(0, st), bindings.NewSharedModuleStore(0, st)
	mod := []byte("\x00asm\x01\x00\x00\x00")
	sha := a.PutFor("alice", mod)
	got, ok, err := b.FetchFor("alice", sha)
	if err != nil || !ok || string(got) != string(mod) {
		t.Fatalf("FetchFor on the other replica = %q, %v, %v", got, ok, err)
	}
	if _, ok, _ := bindings.NewSharedModuleStore(0, st).FetchFor("bob", sha); ok {
		t.Fatal("another principal ran alice's module by its hash through the shared store")
	}
	if _, ok, _ := b.FetchFor("bob", sha); ok {
		t.Fatal("another principal ran alice's module by its hash on the replica that fetched it")
	}
}
