package cli

import (
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/cli/config"
	"github.com/sandcall/sandcall/store"
)

// rateLimiter is the configured transport rate limit, nil when off. With
// a shared store (store: in sandcall.yaml) the buckets live there, so the
// limit holds across replicas. The limit is per principal, so it is off
// without authentication (authenticated false): every request then acts
// for one principal, the local user on loopback (the only place sandcall
// serves without tokens), whom a shared bucket would throttle for the sum
// of its clients (RATIONALE.md, "Why is there no HTTP rate limit without
// authentication?").
func rateLimiter(h config.HTTP, shared store.Store, authenticated bool) mcpserver.RateLimiter {
	if h.RateLimit.PerSecond < 0 || !authenticated {
		return nil
	}
	local := mcpserver.NewTokenBucket(h.RateLimit.PerSecond, h.RateLimit.Burst)
	if shared == nil {
		return local
	}
	return &mcpserver.SharedRateLimiter{Store: shared, PerSecond: h.RateLimit.PerSecond, Burst: h.RateLimit.Burst, Local: local}
}
