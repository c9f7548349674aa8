// Package lru is a bounded least-recently-used cache keyed by SHA-256
// digests: the engines' caches of compiled and transpiled programs.
package lru

import (
	"container/list"
	"sync"
)

// Cache holds values under 32-byte keys within a total cost; the least
// recently used go first. A nil *Cache holds nothing (every method is a
// no-op), so a disabled cache needs no checks. It is safe for concurrent
// use.
type Cache[V any] struct {
	mu    sync.Mutex
	max   int
	used  int
	cost  func(V) int
	order *list.List // front: most recently used; values are *entry[V]
	byKey map[[32]byte]*list.Element
}

type entry[V any] struct {
	key  [32]byte
	v    V
	cost int
}

// New returns a cache whose values cost at most max in all, each value
// costing cost(v), or 1 if cost is nil (max is then a count). If max <= 0
// it returns nil: no cache.
func New[V any](max int, cost func(V) int) *Cache[V] {
	if max <= 0 {
		return nil
	}
	if cost == nil {
		cost = func(V) int { return 1 }
	}
	return &Cache[V]{max: max, cost: cost, order: list.New(), byKey: make(map[[32]byte]*list.Element)}
}

// Get returns the value under key and marks it most recently used.
func (c *Cache[V]) Get(key [32]byte) (v V, ok bool) {
	if c == nil {
		return v, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return v, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry[V]).v, true
}

// Put keeps v under key unless the key is present already or v alone costs
// more than the cache holds, evicting the least recently used values to
// make room.
func (c *Cache[V]) Put(key [32]byte, v V) {
	if c == nil {
		return
	}
	n := c.cost(v)
	if n > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&entry[V]{key: key, v: v, cost: n})
	c.used += n
	for c.used > c.max {
		e := c.order.Remove(c.order.Back()).(*entry[V])
		delete(c.byKey, e.key)
		c.used -= e.cost
	}
}

// Len returns the number of values held.
func (c *Cache[V]) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
