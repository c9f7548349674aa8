package bindings

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

func TestModuleStore(t *testing.T) {
	s := NewModuleStore(10)
	a, b, c := []byte("aaaa"), []byte("bbbb"), []byte("cccc")
	ha, hb := s.Put(a), s.Put(b)
	if got, ok := s.Get(ha); !ok || !bytes.Equal(got, a) {
		t.Fatal("a not stored")
	}
	a[0] = 'x' // the store keeps its own copy
	if got, _ := s.Get(ha); got[0] != 'a' {
		t.Fatal("store aliases the caller's bytes")
	}
	s.Put(c) // 12 bytes > 10: evicts the least recently used, b
	if _, ok := s.Get(hb); ok {
		t.Fatal("b should have been evicted")
	}
	if _, ok := s.Get(ha); !ok {
		t.Fatal("a was used recently and must stay")
	}
	if h := s.Put(bytes.Repeat([]byte("z"), 11)); func() bool { _, ok := s.Get(h); return ok }() {
		t.Fatal("a module larger than the store was kept")
	}
	if ModuleSHA256([]byte("")) != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatal("wrong hash")
	}
}

func TestModuleStoreHammer(t *testing.T) {
	s := NewModuleStore(1 << 10)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				m := []byte(fmt.Sprintf("module-%d-%d", g, i%37))
				h := s.Put(m)
				if got, ok := s.Get(h); ok && !bytes.Equal(got, m) {
					t.Error("wrong module for hash")
				}
			}
		}()
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes > s.max || s.ll.Len() != len(s.m) {
		t.Fatalf("store inconsistent: %d bytes, %d/%d entries", s.bytes, s.ll.Len(), len(s.m))
	}
}
