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
type ModuleStore struct {
	mu    sync.Mutex // guards all below
	max   int
	bytes int
	ll    *list.List // of *storedModule, most recent first
	m     map[string]*list.Element

	shared store.Store // nil: this process only
}

type storedModule struct {
	sha string
	b   []byte
}

// NewModuleStore returns a store holding at most maxBytes of modules. If
// maxBytes is zero or less, 64 MiB.
func NewModuleStore(maxBytes int) *ModuleStore {
	if maxBytes <= 0 {
		maxBytes = 64 << 20
	}
	return &ModuleStore{max: maxBytes, ll: list.New(), m: make(map[string]*list.Element)}
}

// ModuleSHA256 returns the lower-case hex SHA-256 of module.
func ModuleSHA256(module []byte) string {
	h := sha256.Sum256(module)
	return hex.EncodeToString(h[:])
}

// Put stores module (a copy) and returns its hash. A module larger than the
// store is not kept.
func (s *ModuleStore) Put(module []byte) string {
	sha := s.putLocal(module)
	s.putShared(sha, module)
	return sha
}

func (s *ModuleStore) putLocal(module []byte) string {
	sha := ModuleSHA256(module)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[sha]; ok {
		s.ll.MoveToFront(e)
		return sha
	}
	if len(module) > s.max {
		return sha
	}
	s.m[sha] = s.ll.PushFront(&storedModule{sha: sha, b: append([]byte(nil), module...)})
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

// Get returns the module with that hash, if the store holds it. The bytes
// must not be modified.
func (s *ModuleStore) Get(sha string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[sha]
	if !ok {
		return nil, false
	}
	s.ll.MoveToFront(e)
	return e.Value.(*storedModule).b, true
}

// sharedModuleTTL is how long a module stays in a shared store after it
// was last sent.
const sharedModuleTTL = 24 * time.Hour

// NewSharedModuleStore returns a store like NewModuleStore that also keeps
// every module in st (a store shared by replicas), so that a module sent to
// one replica can be named by hash on any other.
func NewSharedModuleStore(maxBytes int, st store.Store) *ModuleStore {
	s := NewModuleStore(maxBytes)
	s.shared = st
	return s
}

// putShared copies module to the shared store; a failure only costs the
// other replicas a resend, so it is not an error.
func (s *ModuleStore) putShared(sha string, module []byte) {
	if s.shared == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	_ = s.shared.Set(ctx, "mod:"+sha, module, sharedModuleTTL)
}

// Fetch is Get, then the shared store: a module found there (and whose
// bytes hash to sha) is kept here too. err is set only when the shared
// store could not be reached.
func (s *ModuleStore) Fetch(sha string) ([]byte, bool, error) {
	if m, ok := s.Get(sha); ok || s.shared == nil {
		return m, ok, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	m, err := s.shared.Get(ctx, "mod:"+sha)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if ModuleSHA256(m) != sha {
		return nil, false, nil
	}
	s.putLocal(m)
	return m, true, nil
}
