package mcpserver

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// RateLimiter is the transport rate limit: it decides whether a principal
// may send one more HTTP request. Keys are principal IDs. The in-memory
// TokenBucket serves one replica; an implementation backed by a shared store
// can serve several.
type RateLimiter interface {
	// Allow takes one request from key's allowance. When none is left it
	// returns false and how long until one is.
	Allow(key string) (ok bool, retryAfter time.Duration)
}

// TokenBucket is an in-memory RateLimiter: each key has a bucket of Burst
// tokens refilled at PerSecond tokens a second. Buckets are kept per key;
// keys are principals, a closed set from the configuration.
type TokenBucket struct {
	rate, burst float64
	now         func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewTokenBucket returns a TokenBucket allowing bursts of burst requests
// and perSecond requests a second sustained.
func NewTokenBucket(perSecond float64, burst int) *TokenBucket {
	return &TokenBucket{rate: perSecond, burst: float64(max(burst, 1)), now: time.Now, buckets: map[string]*bucket{}}
}

// Allow implements RateLimiter.
func (tb *TokenBucket) Allow(key string) (bool, time.Duration) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	now := tb.now()
	b := tb.buckets[key]
	if b == nil {
		b = &bucket{tokens: tb.burst, at: now}
		tb.buckets[key] = b
	}
	if el := now.Sub(b.at).Seconds(); el > 0 {
		b.tokens = math.Min(tb.burst, b.tokens+el*tb.rate)
	}
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	if tb.rate <= 0 {
		return false, time.Hour
	}
	return false, time.Duration((1 - b.tokens) / tb.rate * float64(time.Second))
}

// rateLimit refuses a request over its principal's allowance with 429 and
// Retry-After (whole seconds, at least 1). It runs after authentication:
// the key is the bearer token's principal, or the configured principal.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	if s.rate == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := s.principal.ID
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil && ti.UserID != "" {
			key = ti.UserID
		}
		if ok, wait := s.rate.Allow(key); !ok {
			secs := max(1, int(math.Ceil(wait.Seconds())))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			http.Error(w, "Too Many Requests: this principal's request rate is over the server's limit; retry after "+strconv.Itoa(secs)+"s",
				http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// SharedRateLimiter is a RateLimiter whose buckets live in a store shared
// by replicas (store.Redis), so that a principal's allowance holds across
// them, counted on the store's clock. When the store cannot be reached it
// falls back to a bucket of this replica's own (Local) rather than refusing
// every request: a store outage then loosens the limit to one allowance
// per replica, it never takes the service down.
type SharedRateLimiter struct {
	Store interface {
		Take(ctx context.Context, key string, capacity int, per time.Duration) (bool, error)
	}
	PerSecond float64
	Burst     int
	Local     *TokenBucket // the fallback; required
}

// Allow implements RateLimiter.
func (s *SharedRateLimiter) Allow(key string) (bool, time.Duration) {
	burst := max(s.Burst, 1)
	per := time.Duration(float64(burst) / s.PerSecond * float64(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	ok, err := s.Store.Take(ctx, "rl:http:"+key, burst, per)
	if err != nil {
		return s.Local.Allow(key)
	}
	if ok {
		return true, 0
	}
	return false, time.Duration(math.Ceil(float64(time.Second) / s.PerSecond))
}
