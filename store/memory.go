package store

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// Memory is a Store in this process's memory: the default for one replica.
type Memory struct {
	now func() time.Time

	mu      sync.Mutex
	vals    map[string]memValue
	buckets map[string]*memBucket
	sets    int                              // Sets since the last sweep
	spaces  map[string]map[string]spaceEntry // Space namespaces (space.go)
}

type memValue struct {
	b       []byte
	expires time.Time
}

type memBucket struct {
	tokens float64
	last   time.Time
	idle   time.Duration // a bucket idle this long is full again
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty Memory store.
func NewMemory() *Memory { return NewMemoryClock(nil) }

// NewMemoryClock returns a Memory store reading time from now (nil:
// time.Now), for tests.
func NewMemoryClock(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, vals: map[string]memValue{}, buckets: map[string]*memBucket{}}
}

func (m *Memory) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.vals[key]
	if !ok || !m.now().Before(v.expires) {
		delete(m.vals, key)
		return nil, ErrNotFound
	}
	return v.b, nil
}

func (m *Memory) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setLocked(key, value, ttl)
	return nil
}

func (m *Memory) setLocked(key string, value []byte, ttl time.Duration) {
	now := m.now()
	if m.sets++; m.sets >= 1024 {
		m.sets = 0
		for k, v := range m.vals {
			if !now.Before(v.expires) {
				delete(m.vals, k)
			}
		}
		for k, b := range m.buckets {
			if now.Sub(b.last) >= b.idle {
				delete(m.buckets, k)
			}
		}
	}
	m.vals[key] = memValue{b: append([]byte(nil), value...), expires: now.Add(ttl)}
}

func (m *Memory) SetNX(_ context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.vals[key]; ok && m.now().Before(v.expires) {
		return false, nil
	}
	m.setLocked(key, value, ttl)
	return true, nil
}

func (m *Memory) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.vals, key)
	return nil
}

func (m *Memory) GetDel(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.vals[key]
	delete(m.vals, key)
	if !ok || !m.now().Before(v.expires) {
		return nil, ErrNotFound
	}
	return v.b, nil
}

func (m *Memory) Incr(_ context.Context, key string, ttl time.Duration) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.vals[key]
	var n int64
	if ok && m.now().Before(v.expires) {
		n, _ = strconv.ParseInt(string(v.b), 10, 64)
	} else {
		v.expires = m.now().Add(ttl)
	}
	n++
	m.vals[key] = memValue{b: []byte(strconv.FormatInt(n, 10)), expires: v.expires}
	return n, nil
}

func (m *Memory) Take(_ context.Context, key string, capacity int, per time.Duration) (bool, error) {
	if capacity <= 0 || per <= 0 {
		return false, nil
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.buckets[key]
	if b == nil {
		b = &memBucket{tokens: float64(capacity), last: now, idle: per}
		m.buckets[key] = b
	}
	if dt := now.Sub(b.last); dt > 0 {
		b.tokens = min(float64(capacity), b.tokens+float64(capacity)*float64(dt)/float64(per))
		b.last = now
	}
	if b.tokens < 1 {
		return false, nil
	}
	b.tokens--
	return true, nil
}

func (m *Memory) Ping(context.Context) error { return nil }
func (m *Memory) Close() error               { return nil }
