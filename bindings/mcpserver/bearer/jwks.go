package bearer

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// errKeysUnavailable is the error of a token that could not be checked
// because the issuer's key set could not be fetched: the client's token may
// be good, so the answer is 503 with Retry-After, not 401.
// The details (the URL, the network error) go to the server's log only.
var errKeysUnavailable = errors.New("the token cannot be checked now: the issuer's signing keys could not be fetched; retry shortly")

// maxJWKSBytes bounds a key set document; real ones are a few KB.
const maxJWKSBytes = 1 << 20

// maxJWKSKeys bounds the keys kept from one document.
const maxJWKSKeys = 100

// jwksCache holds the issuer's public keys, fetched from a JWKS URL.
//
// Policy: the first token fetches the set (while that fails, one attempt
// per minInterval); a token whose kid is not in it triggers a refresh, at
// most one per minInterval whatever the tokens say (forged kids cannot
// cause a fetch storm); a set older than maxAge is refreshed in the
// background on use. Only one fetch runs at a time and every request that
// needs it waits for it, each for at most its own context. A failed fetch
// keeps the keys already known (an outage at the issuer does not lock out
// tokens signed with a key already known).
type jwksCache struct {
	url         string
	client      *http.Client
	minInterval time.Duration
	maxAge      time.Duration
	log         *slog.Logger
	now         func() time.Time

	mu        sync.Mutex
	keys      []jose.JSONWebKey // public keys only
	fetchedAt time.Time         // last successful fetch; zero: never
	triedAt   time.Time         // last fetch attempt
	kidAt     time.Time         // last refresh for an unknown kid
	lastErr   error             // of the last attempt; nil after a success
	inflight  chan struct{}     // closed when the running fetch ends; nil: none
	fetches   int               // attempts, for tests and logs
}

// lookup returns the keys that may have signed a token with key id kid
// (every key when kid is empty). It fetches the set when none is known,
// refreshes it when kid is unknown (rate-limited) or the set is older
// than maxAge. It returns errKeysUnavailable only when no key could be
// found and the last fetch failed (or the request gave up waiting).
func (c *jwksCache) lookup(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	c.mu.Lock()
	found := c.match(kid)
	now := c.now()
	// Token-triggered fetches are rate-limited: while no key set is known,
	// one attempt per minInterval; once one is, one refresh for unknown
	// kids per minInterval (the first one at once: a key rotation).
	may := c.triedAt.IsZero() || now.Sub(c.triedAt) >= c.minInterval
	if len(found) == 0 && len(c.keys) > 0 {
		may = c.kidAt.IsZero() || now.Sub(c.kidAt) >= c.minInterval
		if may && c.inflight == nil {
			c.kidAt = now
		}
	}
	if len(found) > 0 {
		if may && c.inflight == nil && now.Sub(c.fetchedAt) > c.maxAge {
			c.startFetch(now) // proactive: the known key serves this request
		}
		c.mu.Unlock()
		return found, nil
	}
	wait := c.inflight
	if wait == nil {
		if !may {
			err := c.lastErr
			c.mu.Unlock()
			if err != nil {
				return nil, errKeysUnavailable
			}
			return nil, nil // an unknown kid, and the set was fetched just now
		}
		wait = c.startFetch(now)
	}
	c.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		return nil, errKeysUnavailable
	}
	c.mu.Lock()
	found, err := c.match(kid), c.lastErr
	c.mu.Unlock()
	if len(found) == 0 && err != nil {
		return nil, errKeysUnavailable
	}
	return found, nil
}

// startFetch starts a fetch and returns the channel closed when it ends.
// c.mu is held.
func (c *jwksCache) startFetch(now time.Time) chan struct{} {
	done := make(chan struct{})
	c.inflight, c.triedAt = done, now
	c.fetches++
	go c.fetch(done)
	return done
}

// match returns the known keys with key id kid, or all when kid is empty.
// c.mu is held.
func (c *jwksCache) match(kid string) []jose.JSONWebKey {
	if kid == "" {
		return c.keys
	}
	var out []jose.JSONWebKey
	for _, k := range c.keys {
		if k.KeyID == kid {
			out = append(out, k)
		}
	}
	return out
}

// fetch gets the key set, on its own timeout (the client's), not on any one
// request's context: requests that give up do not abort it for the others.
func (c *jwksCache) fetch(done chan struct{}) {
	keys, err := c.get()
	c.mu.Lock()
	if err != nil {
		c.lastErr = err
		c.log.Warn("fetching the JWT issuer's key set failed; known keys kept", "jwks_url", c.url, "err", err,
			"keys_kept", len(c.keys), "attempt", c.fetches)
	} else {
		c.keys, c.fetchedAt, c.lastErr = keys, c.now(), nil
	}
	c.inflight = nil
	c.mu.Unlock()
	close(done)
}

func (c *jwksCache) get() ([]jose.JSONWebKey, error) {
	req, err := http.NewRequest(http.MethodGet, c.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/jwk-set+json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("the key set is over %d bytes", maxJWKSBytes)
	}
	return parseJWKS(b)
}

// parseJWKS returns the usable public signing keys of a JWK Set. As RFC
// 7517 §5 asks, keys of an unknown type or with bad parameters are
// skipped, not fatal; symmetric keys and keys not meant for signatures
// are skipped too (a JWKS never vouches for an HMAC secret). Private
// parameters, if a careless issuer published them, are dropped.
func parseJWKS(b []byte) ([]jose.JSONWebKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("not a JWK Set: %v", err)
	}
	var out []jose.JSONWebKey
	for _, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			continue
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		if !k.IsPublic() {
			k = k.Public()
		}
		switch k.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		default:
			continue
		}
		if !k.Valid() {
			continue
		}
		out = append(out, k)
		if len(out) == maxJWKSKeys {
			break
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the key set holds no usable signing key (RSA, EC or Ed25519 public keys)")
	}
	return out, nil
}
