package store

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"
)

// Space is keyed state in namespaces, each with a quota: what programs
// keep between runs (one namespace per principal) and the programs a
// model saved. Memory and Redis implement it; a caller holding a Store
// checks for it with a type assertion.
//
// A value is a key's bytes with a time to live (0: until deleted). A
// namespace holds at most Quota.MaxKeys keys and Quota.MaxBytes bytes of
// keys and values together; a put that would pass either fails with an
// error wrapping ErrQuota and changes nothing (replacing a key counts the
// new value instead of the old). Expired keys free their room.
type Space interface {
	// SpaceGet returns the value of key in ns, or ErrNotFound.
	SpaceGet(ctx context.Context, ns, key string) ([]byte, error)
	// SpacePut stores value under key in ns for ttl (0: no expiry),
	// within q.
	SpacePut(ctx context.Context, ns, key string, value []byte, ttl time.Duration, q Quota) error
	// SpaceDelete removes key from ns and reports whether it was there.
	SpaceDelete(ctx context.Context, ns, key string) (bool, error)
	// SpaceKeys returns the keys of ns that start with prefix, sorted, at
	// most limit of them (limit <= 0: all).
	SpaceKeys(ctx context.Context, ns, prefix string, limit int) ([]string, error)
}

// Quota bounds one namespace of a Space. A zero field is no bound.
type Quota struct {
	MaxKeys  int
	MaxBytes int64
}

// ErrQuota is wrapped by SpacePut's error when the namespace is full:
// QuotaError says which bound.
var ErrQuota = errors.New("store: quota exceeded")

// QuotaError is SpacePut's error for a full namespace.
type QuotaError struct {
	// Keys is true when the key count is at its bound, false for bytes.
	Keys bool
	// Used is the keys or bytes in use, not counting the key being put.
	Used int64
}

func (e *QuotaError) Error() string {
	if e.Keys {
		return "store: quota exceeded: too many keys"
	}
	return "store: quota exceeded: too many bytes"
}

func (e *QuotaError) Unwrap() error { return ErrQuota }

var (
	_ Space = (*Memory)(nil)
	_ Space = (*Redis)(nil)
)

// spaceEntry is one key of a Memory namespace.
type spaceEntry struct {
	v       []byte
	expires time.Time // zero: never
}

func (e spaceEntry) live(now time.Time) bool { return e.expires.IsZero() || now.Before(e.expires) }

// sweepLocked drops the expired keys of ns and returns the live count and
// bytes, leaving key out. m.mu is held.
func (m *Memory) sweepLocked(ns, key string, now time.Time) (n int, bytes int64) {
	for k, e := range m.spaces[ns] {
		if !e.live(now) {
			delete(m.spaces[ns], k)
			continue
		}
		if k != key {
			n++
			bytes += int64(len(k) + len(e.v))
		}
	}
	return n, bytes
}

func (m *Memory) SpaceGet(_ context.Context, ns, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.spaces[ns][key]
	if !ok || !e.live(m.now()) {
		return nil, ErrNotFound
	}
	return append([]byte(nil), e.v...), nil
}

func (m *Memory) SpacePut(_ context.Context, ns, key string, value []byte, ttl time.Duration, q Quota) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	n, bytes := m.sweepLocked(ns, key, now)
	if err := q.check(n, bytes, len(key)+len(value)); err != nil {
		return err
	}
	if m.spaces == nil {
		m.spaces = map[string]map[string]spaceEntry{}
	}
	if m.spaces[ns] == nil {
		m.spaces[ns] = map[string]spaceEntry{}
	}
	e := spaceEntry{v: append([]byte(nil), value...)}
	if ttl > 0 {
		e.expires = now.Add(ttl)
	}
	m.spaces[ns][key] = e
	return nil
}

// check reports whether one more key of size bytes fits beside n keys of
// used bytes.
func (q Quota) check(n int, used int64, size int) error {
	if q.MaxKeys > 0 && n+1 > q.MaxKeys {
		return &QuotaError{Keys: true, Used: int64(n)}
	}
	if q.MaxBytes > 0 && used+int64(size) > q.MaxBytes {
		return &QuotaError{Used: used}
	}
	return nil
}

func (m *Memory) SpaceDelete(_ context.Context, ns, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.spaces[ns][key]
	delete(m.spaces[ns], key)
	if len(m.spaces[ns]) == 0 {
		delete(m.spaces, ns)
	}
	return ok && e.live(m.now()), nil
}

func (m *Memory) SpaceKeys(_ context.Context, ns, prefix string, limit int) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var out []string
	for k, e := range m.spaces[ns] {
		if e.live(now) && strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return sortLimit(out, limit), nil
}

func sortLimit(keys []string, limit int) []string {
	sort.Strings(keys)
	if limit > 0 && len(keys) > limit {
		keys = keys[:limit]
	}
	if keys == nil {
		keys = []string{}
	}
	return keys
}
