package policy

import (
	"sync"
	"time"
)

// rateSpec is a rule's rate limit: at most calls per per, per principal,
// with bursts up to calls.
type rateSpec struct {
	calls int
	per   time.Duration
}

type rateKey struct {
	rule      int
	principal string
}

// bucket is a token bucket: tokens refill continuously at calls/per.
type bucket struct {
	tokens float64
	last   time.Time
	per    time.Duration // a bucket idle this long is full again
}

// rateTable holds the token buckets of one Checker. It is the only mutable
// state of a Checker; a reloaded policy starts with full buckets.
type rateTable struct {
	mu      sync.Mutex
	buckets map[rateKey]*bucket
}

func newRateTable() *rateTable { return &rateTable{buckets: make(map[rateKey]*bucket)} }

// take takes one token from the bucket of (r, principal) at now, and
// reports whether there was one.
func (t *rateTable) take(r *rule, principal string, now time.Time) bool {
	if now.IsZero() {
		now = time.Now()
	}
	k := rateKey{r.index, principal}
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buckets[k]
	if b == nil {
		if len(t.buckets) >= MaxRateKeys && !t.sweepLocked(now) {
			return false
		}
		b = &bucket{tokens: float64(r.rate.calls), last: now, per: r.rate.per}
		t.buckets[k] = b
	}
	refill(b, r.rate, now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func refill(b *bucket, s *rateSpec, now time.Time) {
	if dt := now.Sub(b.last); dt > 0 {
		b.tokens += float64(s.calls) * float64(dt) / float64(s.per)
		if max := float64(s.calls); b.tokens > max {
			b.tokens = max
		}
		b.last = now
	}
}

// sweepLocked drops the buckets idle long enough to be full again (they
// hold no information) and reports whether any room was made.
func (t *rateTable) sweepLocked(now time.Time) bool {
	n := len(t.buckets)
	for k, b := range t.buckets {
		if now.Sub(b.last) >= b.per {
			delete(t.buckets, k)
		}
	}
	return len(t.buckets) < n
}
