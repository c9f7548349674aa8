package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/store"
)

// Defaults of the HTTP transport's limits (sandcall.yaml "http:").
const (
	defaultBodyTimeout    = 30 * time.Second
	defaultMaxConnections = 256
	defaultRatePerSecond  = 50
	defaultRateBurst      = 200
)

// httpConfig is the "http:" section of sandcall.yaml: the limits of
// `serve --http`.
type httpConfig struct {
	// BodyTimeout bounds the time to receive one request body (a body sent
	// at a byte a second is cut off with 408). If absent, 30s.
	BodyTimeout string `yaml:"body_timeout"`
	// MaxConnections caps open connections; one more is answered 503 and
	// closed. If absent, 256.
	MaxConnections int `yaml:"max_connections"`
	// RateLimit is the transport rate limit per principal: a token bucket
	// of Burst requests refilled at PerSecond; a request over it gets 429
	// with Retry-After. If absent, 50 a second, bursts of 200; PerSecond -1
	// turns it off. It applies only with authentication (tokens or JWTs):
	// without, every request is the one local user's (see rateLimiter).
	RateLimit struct {
		PerSecond float64 `yaml:"per_second"`
		Burst     int     `yaml:"burst"`
	} `yaml:"rate_limit"`

	bodyTimeout time.Duration
}

// check validates the section and fills in the defaults.
func (h *httpConfig) check() error {
	h.bodyTimeout = defaultBodyTimeout
	if h.BodyTimeout != "" {
		d, err := time.ParseDuration(h.BodyTimeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("http.body_timeout: want a duration such as 30s, got %q", h.BodyTimeout)
		}
		h.bodyTimeout = d
	}
	if h.MaxConnections < 0 || h.RateLimit.Burst < 0 || (h.RateLimit.PerSecond < 0 && h.RateLimit.PerSecond != -1) {
		return errors.New("http: max_connections and rate_limit.burst must not be negative; rate_limit.per_second is positive, or -1 for no limit")
	}
	if h.MaxConnections == 0 {
		h.MaxConnections = defaultMaxConnections
	}
	if h.RateLimit.PerSecond == 0 {
		h.RateLimit.PerSecond = defaultRatePerSecond
	}
	if h.RateLimit.Burst == 0 {
		h.RateLimit.Burst = defaultRateBurst
	}
	return nil
}

// rateLimiter is the configured transport rate limit, nil when off. With
// a shared store (store: in sandcall.yaml) the buckets live there, so the
// limit holds across replicas. The limit is per principal, so it is off
// without authentication (authenticated false): every request then acts
// for one principal, the local user on loopback (the only place sandcall
// serves without tokens), whom a shared bucket would throttle for the sum
// of its clients (RATIONALE.md, "Why is there no rate limit without
// authentication?").
func (h *httpConfig) rateLimiter(shared store.Store, authenticated bool) mcpserver.RateLimiter {
	if h.RateLimit.PerSecond < 0 || !authenticated {
		return nil
	}
	local := mcpserver.NewTokenBucket(h.RateLimit.PerSecond, h.RateLimit.Burst)
	if shared == nil {
		return local
	}
	return &mcpserver.SharedRateLimiter{Store: shared, PerSecond: h.RateLimit.PerSecond, Burst: h.RateLimit.Burst, Local: local}
}
