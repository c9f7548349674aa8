package lru

import (
	"crypto/sha256"
	"testing"
)

func key(s string) [32]byte { return sha256.Sum256([]byte(s)) }

func TestCountBound(t *testing.T) {
	c := New[string](2, nil)
	c.Put(key("a"), "A")
	c.Put(key("b"), "B")
	if v, ok := c.Get(key("a")); !ok || v != "A" { // a is now the most recent
		t.Fatalf("Get(a) = %q, %v", v, ok)
	}
	c.Put(key("c"), "C") // evicts b, the least recently used
	if _, ok := c.Get(key("b")); ok {
		t.Error("b survived past the bound")
	}
	if _, ok := c.Get(key("a")); !ok || c.Len() != 2 {
		t.Errorf("a evicted, or %d values held; want a kept and 2 held", c.Len())
	}
}

func TestCostBound(t *testing.T) {
	c := New[string](10, func(s string) int { return len(s) })
	c.Put(key("x"), "123456")
	c.Put(key("big"), "12345678901") // over the whole cache: not kept
	if _, ok := c.Get(key("big")); ok {
		t.Error("a value over the bound was kept")
	}
	c.Put(key("y"), "12345") // 6 + 5 > 10: evicts x
	if _, ok := c.Get(key("x")); ok || c.Len() != 1 {
		t.Errorf("x kept or %d values held; want x evicted and 1 held", c.Len())
	}
}

func TestNil(t *testing.T) {
	c := New[int](0, nil)
	if c != nil {
		t.Fatal("New(0) returned a cache")
	}
	c.Put(key("a"), 1)
	if _, ok := c.Get(key("a")); ok || c.Len() != 0 {
		t.Error("a nil cache held a value")
	}
}
