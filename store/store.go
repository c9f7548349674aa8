// Package store is the state sandcall replicas share: output refs of
// read_output, rate-limit buckets, uploaded WebAssembly modules and keys,
// and, in a Space (space.go), the state programs keep between runs and
// the programs a model saved, in namespaces with quotas.
// One small interface with two implementations: Memory (the default, one
// process) and Redis (every replica behind a load balancer sees the same
// state). Values are opaque bytes with a time to live; Take is an atomic
// token bucket and Incr an atomic counter, so that limits hold across
// replicas.
//
// Errors: a key that is absent or expired is ErrNotFound; a store that
// cannot be reached (Redis down) answers errors that wrap ErrUnavailable,
// which callers turn into E_INTERNAL with a hint. Nothing panics, and the
// Redis client reconnects by itself once the server is back.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is Get's error for a key that is absent or expired.
var ErrNotFound = errors.New("store: not found")

// ErrUnavailable wraps every error of a store that cannot be reached.
var ErrUnavailable = errors.New("store: unavailable")

// Store is state shared by the replicas of one deployment. Implementations
// are safe for concurrent use. Keys are plain strings; the store adds its
// own prefix where needed.
type Store interface {
	// Get returns the value under key, or ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores value under key for ttl (ttl > 0).
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// SetNX stores value under key for ttl only if key is absent, and
	// reports whether it did.
	SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error)
	// Delete removes key; an absent key is not an error.
	Delete(ctx context.Context, key string) error
	// GetDel removes key and returns the value it held, atomically: of
	// several callers racing for one key, one gets the value and the
	// others ErrNotFound. A token that may be used once is a key taken
	// with GetDel: if the store loses it, it is not used at all.
	GetDel(ctx context.Context, key string) ([]byte, error)
	// Incr adds one to the counter under key (created at 0, expiring ttl
	// after its creation) and returns the new value.
	Incr(ctx context.Context, key string, ttl time.Duration) (int64, error)
	// Take takes one token from the bucket under key, which holds at most
	// capacity tokens and refills continuously at capacity per per; a new
	// bucket is full. It reports whether there was a token.
	Take(ctx context.Context, key string, capacity int, per time.Duration) (bool, error)
	// Ping reports whether the store can be reached.
	Ping(ctx context.Context) error
	// Close releases the store's connections.
	Close() error
}

// Open returns the store named by url: "" or "memory:" for a Memory store,
// "redis://[user:password@]host:port[/db]" (or rediss:// for TLS) for Redis.
func Open(url string) (Store, error) {
	switch {
	case url == "" || url == "memory:":
		return NewMemory(), nil
	case len(url) > 8 && (url[:8] == "redis://" || (len(url) > 9 && url[:9] == "rediss://")):
		return NewRedis(url)
	}
	return nil, errors.New("store: unknown store " + redact(url) + ": want memory: or redis://host:port")
}

// redact drops a password from a URL for messages.
func redact(u string) string {
	at := -1
	for i := len(u) - 1; i >= 0; i-- {
		if u[i] == '@' {
			at = i
			break
		}
	}
	if at < 0 {
		return u
	}
	for i := 0; i < at; i++ {
		if i+3 <= len(u) && u[i:i+3] == "://" {
			return u[:i+3] + "…@" + u[at+1:]
		}
	}
	return "…@" + u[at+1:]
}
