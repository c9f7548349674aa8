package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/store/storetest"
)

func eachSpace(t *testing.T, f func(t *testing.T, s store.Space)) {
	each(t, func(t *testing.T, s store.Store) {
		sp, ok := s.(store.Space)
		if !ok {
			t.Fatalf("%T is not a Space", s)
		}
		f(t, sp)
	})
}

func TestSpaceGetPutKeys(t *testing.T) {
	eachSpace(t, func(t *testing.T, s store.Space) {
		ctx := context.Background()
		if _, err := s.SpaceGet(ctx, "alice", "k"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("absent key: %v", err)
		}
		for _, k := range []string{"b", "a/1", "a/2"} {
			if err := s.SpacePut(ctx, "alice", k, []byte(`"`+k+`"`), time.Hour, store.Quota{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SpacePut(ctx, "bob", "a/3", []byte("1"), 0, store.Quota{}); err != nil {
			t.Fatal(err)
		}
		if b, err := s.SpaceGet(ctx, "alice", "a/2"); err != nil || string(b) != `"a/2"` {
			t.Fatalf("get = %s, %v", b, err)
		}
		if _, err := s.SpaceGet(ctx, "bob", "b"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another namespace's key: %v", err)
		}
		keys, err := s.SpaceKeys(ctx, "alice", "a/", 0)
		if err != nil || fmt.Sprint(keys) != "[a/1 a/2]" {
			t.Fatalf("keys = %v, %v", keys, err)
		}
		keys, _ = s.SpaceKeys(ctx, "alice", "", 2)
		if fmt.Sprint(keys) != "[a/1 a/2]" {
			t.Fatalf("limited keys = %v", keys)
		}
		if keys, _ := s.SpaceKeys(ctx, "nobody", "", 0); keys == nil || len(keys) != 0 {
			t.Fatalf("empty namespace: %#v", keys)
		}
		if ok, err := s.SpaceDelete(ctx, "alice", "b"); !ok || err != nil {
			t.Fatalf("delete = %v, %v", ok, err)
		}
		if ok, _ := s.SpaceDelete(ctx, "alice", "b"); ok {
			t.Fatal("a second delete found the key")
		}
		// A namespace whose name looks like another's prefix stays apart.
		if err := s.SpacePut(ctx, "alice:v:a", "x", []byte("1"), 0, store.Quota{}); err != nil {
			t.Fatal(err)
		}
		if keys, _ := s.SpaceKeys(ctx, "alice", "", 0); fmt.Sprint(keys) != "[a/1 a/2]" {
			t.Fatalf("keys after a look-alike namespace: %v", keys)
		}
	})
}

func TestSpaceQuota(t *testing.T) {
	eachSpace(t, func(t *testing.T, s store.Space) {
		ctx := context.Background()
		q := store.Quota{MaxKeys: 2, MaxBytes: 20}
		if err := s.SpacePut(ctx, "p", "k1", []byte("12345"), 0, q); err != nil { // 7 bytes
			t.Fatal(err)
		}
		if err := s.SpacePut(ctx, "p", "k2", []byte("12345"), 0, q); err != nil { // 14
			t.Fatal(err)
		}
		var qe *store.QuotaError
		err := s.SpacePut(ctx, "p", "k3", []byte("1"), 0, q)
		if !errors.As(err, &qe) || !qe.Keys || qe.Used != 2 || !errors.Is(err, store.ErrQuota) {
			t.Fatalf("a third key: %v", err)
		}
		// Replacing a key counts its new size, not the old one too.
		if err := s.SpacePut(ctx, "p", "k2", []byte("1234567890"), 0, q); err != nil { // 7 + 12 = 19
			t.Fatal(err)
		}
		err = s.SpacePut(ctx, "p", "k2", []byte("12345678901"), 0, q) // 7 + 13 = 20: fits
		if err != nil {
			t.Fatal(err)
		}
		err = s.SpacePut(ctx, "p", "k2", []byte("123456789012"), 0, q) // 21
		if !errors.As(err, &qe) || qe.Keys || qe.Used != 7 {
			t.Fatalf("over the bytes: %v", err)
		}
		if b, _ := s.SpaceGet(ctx, "p", "k2"); string(b) != "12345678901" {
			t.Fatalf("a refused put changed the value: %s", b)
		}
		if ok, _ := s.SpaceDelete(ctx, "p", "k1"); !ok {
			t.Fatal("delete")
		}
		if err := s.SpacePut(ctx, "p", "k3", []byte("1"), 0, q); err != nil {
			t.Fatalf("after a delete: %v", err)
		}
	})
}

// TestSpaceQuotaConcurrent: puts racing for the last room never pass the
// quota together.
func TestSpaceQuotaConcurrent(t *testing.T) {
	eachSpace(t, func(t *testing.T, s store.Space) {
		ctx := context.Background()
		q := store.Quota{MaxKeys: 5}
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if s.SpacePut(ctx, "race", fmt.Sprint(i), []byte("x"), time.Hour, q) == nil {
					mu.Lock()
					ok++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		keys, _ := s.SpaceKeys(ctx, "race", "", 0)
		if ok != 5 || len(keys) != 5 {
			t.Fatalf("%d puts succeeded, %d keys", ok, len(keys))
		}
	})
}

// TestSpaceExpiry: an expired key is gone and frees its room (Memory, on
// its clock).
func TestSpaceExpiry(t *testing.T) {
	now := time.Unix(1000, 0)
	m := store.NewMemoryClock(func() time.Time { return now })
	ctx := context.Background()
	q := store.Quota{MaxKeys: 1}
	if err := m.SpacePut(ctx, "p", "a", []byte("1"), time.Minute, q); err != nil {
		t.Fatal(err)
	}
	if err := m.SpacePut(ctx, "p", "b", []byte("1"), time.Minute, q); err == nil {
		t.Fatal("quota not applied")
	}
	now = now.Add(time.Minute)
	if _, err := m.SpaceGet(ctx, "p", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired key: %v", err)
	}
	if keys, _ := m.SpaceKeys(ctx, "p", "", 0); len(keys) != 0 {
		t.Fatalf("keys %v", keys)
	}
	if err := m.SpacePut(ctx, "p", "b", []byte("1"), 0, q); err != nil {
		t.Fatalf("the expired key still takes room: %v", err)
	}
}

// TestSpaceRedisShared: two clients of one Redis see one namespace.
func TestSpaceRedisShared(t *testing.T) {
	r := storetest.StartRedis(t)
	a, _ := store.NewRedis(r.URL)
	b, _ := store.NewRedis(r.URL)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	if err := a.SpacePut(ctx, "alice", "k", []byte("v"), time.Hour, store.Quota{MaxKeys: 1}); err != nil {
		t.Fatal(err)
	}
	if v, err := b.SpaceGet(ctx, "alice", "k"); err != nil || string(v) != "v" {
		t.Fatalf("the other replica reads %q, %v", v, err)
	}
	if err := b.SpacePut(ctx, "alice", "k2", []byte("v"), time.Hour, store.Quota{MaxKeys: 1}); !errors.Is(err, store.ErrQuota) {
		t.Fatalf("the other replica's put passed the shared quota: %v", err)
	}
}

// TestSpaceRedisDown: a store that cannot be reached says so.
func TestSpaceRedisDown(t *testing.T) {
	s, _ := store.NewRedis("redis://127.0.0.1:1/0")
	defer s.Close()
	ctx := context.Background()
	if err := s.SpacePut(ctx, "p", "k", nil, 0, store.Quota{}); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("put: %v", err)
	}
	if _, err := s.SpaceKeys(ctx, "p", "", 0); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("keys: %v", err)
	}
}
