package bindings

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"sync"
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
