package process

import (
	"context"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// queued admits a job for principal in the background and waits until it is
// in the queue (or already admitted); the channel gets its result.
func queued(t *testing.T, s *sched, principal string) <-chan *sandbox.Error {
	t.Helper()
	s.mu.Lock()
	before := s.seq
	s.mu.Unlock()
	ch := make(chan *sandbox.Error, 1)
	go func() { ch <- s.admit(context.Background(), context.Background(), principal, time.Hour) }()
	for {
		s.mu.Lock()
		n := s.seq
		s.mu.Unlock()
		if n > before {
			return ch
		}
		time.Sleep(time.Millisecond) // polling a condition, not timing
	}
}

func admitNow(t *testing.T, s *sched, principal string) {
	t.Helper()
	if err := s.admit(context.Background(), context.Background(), principal, time.Hour); err != nil {
		t.Fatalf("admit %s: %v", principal, err)
	}
}

func pending(ch <-chan *sandbox.Error) bool {
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

// TestSchedFreedSlotGoesToTheLeastServed: with the pool full of one
// principal's jobs, a freed slot goes to another principal waiting with
// fewer jobs running, though it queued later.
func TestSchedFreedSlotGoesToTheLeastServed(t *testing.T) {
	s := newSched(2, 10, 0)
	admitNow(t, s, "flood")
	admitNow(t, s, "flood")
	f3 := queued(t, s, "flood")
	b1 := queued(t, s, "b")
	s.done("flood")
	if err := <-b1; err != nil {
		t.Fatalf("b: %v", err)
	}
	if !pending(f3) {
		t.Fatal("the flooding principal's third job ran before the other principal's first")
	}
	s.done("flood")
	if err := <-f3; err != nil {
		t.Fatal(err)
	}
}

// TestSchedAloneUsesEverything: one principal alone takes every slot and
// the whole queue.
func TestSchedAloneUsesEverything(t *testing.T) {
	s := newSched(3, 4, 0)
	for i := 0; i < 3; i++ {
		admitNow(t, s, "a")
	}
	var qs []<-chan *sandbox.Error
	for i := 0; i < 4; i++ {
		qs = append(qs, queued(t, s, "a"))
	}
	if err := s.admit(context.Background(), context.Background(), "a", time.Hour); err == nil || err.Code != sandbox.EBusy {
		t.Fatalf("past the queue: %v, want E_BUSY", err)
	}
	for i := range qs {
		s.done("a")
		if err := <-qs[i]; err != nil {
			t.Fatalf("queued job %d: %v (FIFO within a principal)", i, err)
		}
	}
}

// TestSchedQueueShare: when one principal fills the queue, a newcomer takes
// the place of its newest waiter, which gets E_BUSY.
func TestSchedQueueShare(t *testing.T) {
	s := newSched(1, 2, 0)
	admitNow(t, s, "flood")
	f1 := queued(t, s, "flood")
	f2 := queued(t, s, "flood")
	b1 := queued(t, s, "b")
	if err := <-f2; err == nil || err.Code != sandbox.EBusy || err.Hint == "" {
		t.Fatalf("flood's newest waiter: %v, want E_BUSY with a hint", err)
	}
	if !pending(f1) || !pending(b1) {
		t.Fatal("the other waiters should still wait")
	}
	// A second newcomer of b does not evict: b and flood now hold one place
	// each.
	if err := s.admit(context.Background(), context.Background(), "b", time.Hour); err == nil || err.Code != sandbox.EBusy {
		t.Fatalf("b's second job: %v, want E_BUSY", err)
	}
	s.done("flood")
	s.done(<-firstOf(f1, b1))
	s.done(<-firstOf(f1, b1))
}

// firstOf waits for the first of two admissions and returns its principal.
func firstOf(a, b <-chan *sandbox.Error) <-chan string {
	out := make(chan string, 1)
	select {
	case <-a:
		out <- "flood"
	case <-b:
		out <- "b"
	}
	return out
}

// TestSchedTimeoutAndCancel: a waiter gives up at its time-out (E_BUSY) or
// its context (E_CANCELLED) and leaves the queue.
func TestSchedTimeoutAndCancel(t *testing.T) {
	s := newSched(1, 4, 0)
	admitNow(t, s, "a")
	if err := s.admit(context.Background(), context.Background(), "a", time.Millisecond); err == nil || err.Code != sandbox.EBusy {
		t.Fatalf("time-out: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.admit(ctx, context.Background(), "b", time.Hour); err == nil || err.Code != sandbox.ECancelled {
		t.Fatalf("cancelled: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting != 0 || len(s.byP) != 1 {
		t.Fatalf("waiting %d, principals %d: the queue kept what left it", s.waiting, len(s.byP))
	}
}

// TestSchedIdleExpiry: idle workers past the cap or kept since before the
// cut-off are handed back for discarding, oldest first, and a principal
// never gets another's.
func TestSchedIdleExpiry(t *testing.T) {
	s := newSched(4, 4, 2)
	a1, a2, b1 := &worker{principal: "a"}, &worker{principal: "a"}, &worker{principal: "b"}
	if d := s.putIdle("a", a1); len(d) != 0 {
		t.Fatalf("discarded %d under the cap", len(d))
	}
	s.putIdle("a", a2)
	if d := s.putIdle("b", b1); len(d) != 1 || d[0] != a1 {
		t.Fatalf("past the cap: discarded %v, want the oldest (a1)", d)
	}
	if d := s.expire(time.Now().Add(time.Hour)); len(d) != 2 {
		t.Fatalf("expired %d, want both left", len(d))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.idle) != 0 || len(s.byP) != 0 {
		t.Fatalf("idle %d, principals %d after expiry", len(s.idle), len(s.byP))
	}
}
