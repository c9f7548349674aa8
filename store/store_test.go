package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/store/storetest"
)

// each runs f against a Memory store and a Redis store on a real
// redis-server.
func each(t *testing.T, f func(t *testing.T, s store.Store)) {
	t.Run("memory", func(t *testing.T) { f(t, store.NewMemory()) })
	t.Run("redis", func(t *testing.T) {
		r := storetest.StartRedis(t)
		s, err := store.Open(r.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		f(t, s)
	})
}

func TestGetSet(t *testing.T) {
	each(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		if _, err := s.Get(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get of an absent key: %v", err)
		}
		if err := s.Set(ctx, "k", []byte("v1"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if b, err := s.Get(ctx, "k"); err != nil || string(b) != "v1" {
			t.Fatalf("Get = %q, %v", b, err)
		}
		if ok, err := s.SetNX(ctx, "k", []byte("v2"), time.Minute); ok || err != nil {
			t.Fatalf("SetNX over a present key = %v, %v", ok, err)
		}
		if ok, err := s.SetNX(ctx, "n", []byte("x"), time.Minute); !ok || err != nil {
			t.Fatalf("SetNX of an absent key = %v, %v", ok, err)
		}
		if err := s.Delete(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get after Delete: %v", err)
		}
		for i := int64(1); i <= 3; i++ {
			if n, err := s.Incr(ctx, "c", time.Minute); n != i || err != nil {
				t.Fatalf("Incr #%d = %d, %v", i, n, err)
			}
		}
	})
}

// TestGetDelOnce: of many callers taking one key with GetDel at once,
// exactly one gets its value; an absent key is ErrNotFound.
func TestGetDelOnce(t *testing.T) {
	each(t, func(t *testing.T, s store.Store) {
		ctx := context.Background()
		if _, err := s.GetDel(ctx, "absent"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("GetDel of an absent key: %v", err)
		}
		if err := s.Set(ctx, "once", []byte("t"), time.Minute); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		got := 0
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, err := s.GetDel(ctx, "once")
				switch {
				case err == nil && string(b) == "t":
					mu.Lock()
					got++
					mu.Unlock()
				case !errors.Is(err, store.ErrNotFound):
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if got != 1 {
			t.Errorf("%d callers got the value, want 1", got)
		}
	})
}

// TestTakeConcurrent: a bucket of N grants exactly N tokens to many
// concurrent takers (within a window far shorter than its refill).
func TestTakeConcurrent(t *testing.T) {
	each(t, func(t *testing.T, s store.Store) {
		const n = 10
		var wg sync.WaitGroup
		var mu sync.Mutex
		granted := 0
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := s.Take(context.Background(), "b", n, time.Hour)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					granted++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if granted != n {
			t.Fatalf("granted %d tokens, want %d", granted, n)
		}
	})
}

func TestMemoryExpiryAndRefill(t *testing.T) {
	now := time.Unix(1000, 0)
	s := store.NewMemoryClock(func() time.Time { return now })
	ctx := context.Background()
	_ = s.Set(ctx, "k", []byte("v"), time.Minute)
	if ok, _ := s.Take(ctx, "b", 1, time.Minute); !ok {
		t.Fatal("first take refused")
	}
	if ok, _ := s.Take(ctx, "b", 1, time.Minute); ok {
		t.Fatal("second take granted")
	}
	now = now.Add(time.Minute)
	if _, err := s.Get(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after the TTL: %v", err)
	}
	if ok, _ := s.Take(ctx, "b", 1, time.Minute); !ok {
		t.Fatal("take after a full refill refused")
	}
}

// TestRedisDownAndBack: with Redis stopped every operation fails with
// ErrUnavailable (no panic, no hang past the timeouts); after it restarts
// the same store works again.
func TestRedisDownAndBack(t *testing.T) {
	r := storetest.StartRedis(t)
	s, err := store.Open(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Set(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	r.Stop()
	if _, err := s.Get(ctx, "k"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Get with Redis down: %v, want ErrUnavailable", err)
	}
	if _, err := s.Take(ctx, "b", 1, time.Minute); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Take with Redis down: %v", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Ping with Redis down: %v", err)
	}
	r.Start()
	if err := s.Set(ctx, "k", []byte("v2"), time.Minute); err != nil {
		t.Fatalf("Set after Redis came back: %v", err)
	}
	if b, err := s.Get(ctx, "k"); err != nil || string(b) != "v2" {
		t.Fatalf("Get after Redis came back = %q, %v", b, err)
	}
}

func TestOpen(t *testing.T) {
	for _, u := range []string{"", "memory:", "redis://127.0.0.1:1/0"} {
		s, err := store.Open(u)
		if err != nil {
			t.Errorf("Open(%q): %v", u, err)
			continue
		}
		s.Close()
	}
	_, err := store.Open("postgres://u:secret@h/db")
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Open of an unknown scheme: %v", err)
	}
	if s := err.Error(); strings.Contains(s, "secret") {
		t.Fatalf("error leaks the password: %s", s)
	}
}
