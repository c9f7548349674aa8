package mcpserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sandcall/sandcall/store"
)

// TestSharedRateLimiterAcrossReplicas: two replicas' limiters over one
// store share a principal's allowance; another principal has its own.
func TestSharedRateLimiterAcrossReplicas(t *testing.T) {
	st := store.NewMemory()
	mk := func() *SharedRateLimiter {
		return &SharedRateLimiter{Store: st, PerSecond: 0.001, Burst: 3, Local: NewTokenBucket(0.001, 3)}
	}
	a, b := mk(), mk()
	allowed := 0
	for i := range 6 {
		l := a
		if i%2 == 1 {
			l = b
		}
		if ok, _ := l.Allow("alice"); ok {
			allowed++
		}
	}
	if allowed != 3 {
		t.Fatalf("alice got %d of 6 requests through two replicas, want 3 (burst 3, shared)", allowed)
	}
	ok, retry := a.Allow("alice")
	if ok || retry <= 0 {
		t.Fatalf("over the allowance: ok=%v retryAfter=%v, want refused with a Retry-After", ok, retry)
	}
	if ok, _ := b.Allow("bob"); !ok {
		t.Fatal("bob was refused: buckets are per principal")
	}
}

type downStore struct{}

func (downStore) Take(context.Context, string, int, time.Duration) (bool, error) {
	return false, errors.New("connection refused")
}

// TestSharedRateLimiterStoreDown: with the store unreachable the limit
// falls back to this replica's own bucket — neither refusing everything
// nor lifting the limit.
func TestSharedRateLimiterStoreDown(t *testing.T) {
	l := &SharedRateLimiter{Store: downStore{}, PerSecond: 0.001, Burst: 2, Local: NewTokenBucket(0.001, 2)}
	got := 0
	for range 5 {
		if ok, _ := l.Allow("alice"); ok {
			got++
		}
	}
	if got != 2 {
		t.Fatalf("store down: %d of 5 allowed, want the local burst of 2", got)
	}
}
