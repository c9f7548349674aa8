package bindings

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/sandcall/sandcall/store"
)

// ModuleStore keeps WebAssembly modules the server has received, by the
// SHA-256 of their bytes, so that a client may send a large module once and
// name it by hash afterwards (run_code's module_sha256). It is bounded in
// total bytes and evicts the least recently used module. It is safe for
// concurrent use. Compiled code is cached by the engine, not here.
//
// A module is bound to the principals that sent it: GetFor finds it only
// for one of them, so a hash alone never runs another principal's module,
// and "never sent" and "sent by someone else" are the same answer (no
// oracle of what others sent). The bytes are kept once, whoever sent them.
// With a shared store (NewSharedModuleStore) the binding holds across
// replicas too: the shared key names the owner.
type ModuleStore struct {
	mu    sync.Mutex // guards all below
	max   int
	bytes int
	ll    *list.List // of *storedModule, most recent first
	m     map[string]*list.Element

	shared store.Store // nil: this process only
}

type storedModule struct {
	sha    string
	b      []byte
	owners map[string]bool // principal IDs that sent the module
}

// NewModuleStore returns a store holding at most maxBytes of modules. If
// maxBytes is zero or less, 64 MiB.
func NewModuleStore(maxBytes int) *ModuleStore {
	if maxBytes <= 0 {
		maxBytes = 64 << 20
	}
	return &ModuleStore{max: maxBytes, ll: list.New(), m: make(map[string]*list.Element)}
}

// sharedModuleTTL is how long a module stays in a shared store after it
// was last sent.
const sharedModuleTTL = 24 * time.Hour

// NewSharedModuleStore returns a store like NewModuleStore that also keeps
// every module in st (a store shared by replicas), so that a module sent to
// one replica can be named by hash on any other by the same principal.
func NewSharedModuleStore(maxBytes int, st store.Store) *ModuleStore {
	s := NewModuleStore(maxBytes)
	s.shared = st
	return s
}

// ModuleSHA256 returns the lower-case hex SHA-256 of module.
func ModuleSHA256(module []byte) string {
	h := sha256.Sum256(module)
	return hex.EncodeToString(h[:])
}

// Put stores module (a copy) with no owner: PutFor("", module).
func (s *ModuleStore) Put(module []byte) string { return s.PutFor("", module) }

// Get is GetFor("", sha): only modules stored by Put.
func (s *ModuleStore) Get(sha string) ([]byte, bool) { return s.GetFor("", sha) }

// PutFor stores module (a copy) for the principal owner and returns its
// hash. A module larger than the store is not kept locally; with a shared
// store it is copied there too (a failure only costs other replicas a
// resend, so it is not an error).
func (s *ModuleStore) PutFor(owner string, module []byte) string {
	sha := s.putLocal(owner, module)
	s.putShared(owner, sha, module)
	return sha
}

func (s *ModuleStore) putLocal(owner string, module []byte) string {
	sha := ModuleSHA256(module)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[sha]; ok {
		s.ll.MoveToFront(e)
		e.Value.(*storedModule).owners[owner] = true
		return sha
	}
	if len(module) > s.max {
		return sha
	}
	s.m[sha] = s.ll.PushFront(&storedModule{sha: sha, b: append([]byte(nil), module...), owners: map[string]bool{owner: true}})
	s.bytes += len(module)
	for s.bytes > s.max {
		e := s.ll.Back()
		old := e.Value.(*storedModule)
		s.ll.Remove(e)
		delete(s.m, old.sha)
		s.bytes -= len(old.b)
	}
	return sha
}

// GetFor returns the module with that hash, if the store holds it and
// owner sent it. The bytes must not be modified.
func (s *ModuleStore) GetFor(owner, sha string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[sha]
	if !ok || !e.Value.(*storedModule).owners[owner] {
		return nil, false
	}
	s.ll.MoveToFront(e)
	return e.Value.(*storedModule).b, true
}

// sharedModuleKey names a module in the shared store by its owner and
// hash: the owner is hashed so that a principal ID never appears in a key.
func sharedModuleKey(owner, sha string) string {
	h := sha256.Sum256([]byte(owner))
	return "mod:" + hex.EncodeToString(h[:8]) + ":" + sha
}

func (s *ModuleStore) putShared(owner, sha string, module []byte) {
	if s.shared == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	_ = s.shared.Set(ctx, sharedModuleKey(owner, sha), module, sharedModuleTTL)
}

// FetchFor is GetFor, then the shared store: a module that owner sent to
// another replica (and whose bytes hash to sha) is kept here too. err is
// set only when the shared store could not be reached.
func (s *ModuleStore) FetchFor(owner, sha string) ([]byte, bool, error) {
	if m, ok := s.GetFor(owner, sha); ok || s.shared == nil {
		return m, ok, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	m, err := s.shared.Get(ctx, sharedModuleKey(owner, sha))
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if ModuleSHA256(m) != sha {
		return nil, false, nil
	}
	s.putLocal(owner, m)
	return m, true, nil
}
