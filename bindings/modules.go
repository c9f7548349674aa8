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
//
// A module is bound to the principals that sent it: Get finds it only for
// one of them, so a hash alone never runs another principal's module, and
// "never sent" and "sent by someone else" are the same answer (no oracle
// of what others sent). The bytes are kept once, whoever sent them.
type ModuleStore struct {
	mu    sync.Mutex // guards all below
	max   int
	bytes int
	ll    *list.List // of *storedModule, most recent first
	m     map[string]*list.Element
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
// hash. A module larger than the store is not kept.
func (s *ModuleStore) PutFor(owner string, module []byte) string {
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
