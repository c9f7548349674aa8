// Package jwttest plays an OAuth authorization server as far as a
// resource server sees one, for tests of JWT authentication: it generates
// signing keys (RSA 2048 "rsa1", ECDSA P-256 "ec1", Ed25519 "ed1"), serves
// the public halves it is told to publish as a JWKS over httptest (which
// can be switched down or made to hang, and counts its fetches), signs
// tokens with go-jose, builds claims, and reads a 401's Bearer challenge
// with the go-sdk's own parser.
//
// It is a test helper: the tests of bindings/mcpserver and cmd/sandcall
// use it, production code does not.
//
//	is := jwttest.NewIssuer(t, "rsa1", "ec1")
//	tok := is.Sign(t, "rsa1", "", is.Claims("alice", "https://sandcall.example/mcp"))
//	resp, body := jwttest.Post(t, serverURL+"/mcp", tok)
package jwttest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Kids are the key ids an Issuer holds a private key for.
var Kids = []string{"rsa1", "ec1", "ed1"}

// Issuer is a JWT issuer with its JWKS endpoint at URL.
type Issuer struct {
	// URL is the JWKS endpoint, and the issuer ("iss") Claims puts in.
	URL string
	// Fetches counts the requests to the JWKS endpoint.
	Fetches atomic.Int32
	// Down makes the endpoint answer 502.
	Down atomic.Bool
	// Hang makes the endpoint answer nothing until the request is
	// cancelled (or the test ends); each such fetch sends on Arrived if
	// it has room.
	Hang    atomic.Bool
	Arrived chan struct{}

	keys map[string]crypto.Signer
	algs map[string]jose.SignatureAlgorithm
	mu   sync.Mutex
	set  []byte
}

// NewIssuer generates the keys of Kids, publishes those of published,
// and serves the JWKS until the test ends.
func NewIssuer(t testing.TB, published ...string) *Issuer {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, dk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is := &Issuer{
		Arrived: make(chan struct{}, 1),
		keys:    map[string]crypto.Signer{"rsa1": rk, "ec1": ek, "ed1": dk},
		algs:    map[string]jose.SignatureAlgorithm{"rsa1": jose.RS256, "ec1": jose.ES256, "ed1": jose.EdDSA},
	}
	is.Publish(published...)
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.Fetches.Add(1)
		if is.Hang.Load() {
			select {
			case is.Arrived <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		if is.Down.Load() {
			http.Error(w, "maintenance", http.StatusBadGateway)
			return
		}
		is.mu.Lock()
		b := is.set
		is.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Write(b)
	}))
	t.Cleanup(func() { close(release); ts.Close() })
	is.URL = ts.URL
	return is
}

// Publish sets the JWKS to the public keys of kids.
func (is *Issuer) Publish(kids ...string) {
	var set jose.JSONWebKeySet
	for _, kid := range kids {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: is.keys[kid].Public(), KeyID: kid, Algorithm: string(is.algs[kid]), Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		panic(err)
	}
	is.mu.Lock()
	is.set = b
	is.mu.Unlock()
}

// Key returns the private key of kid.
func (is *Issuer) Key(kid string) crypto.Signer { return is.keys[kid] }

// Sign returns a JWT with claims, signed by the key kid, whose header
// names hdrKid (kid if hdrKid is empty).
func (is *Issuer) Sign(t testing.TB, kid, hdrKid string, claims map[string]any) string {
	t.Helper()
	if hdrKid == "" {
		hdrKid = kid
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: is.algs[kid], Key: jose.JSONWebKey{Key: is.keys[kid], KeyID: hdrKid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Claims are valid claims from this issuer for subject sub and audience
// aud (iat and nbf now, exp in an hour), changed by kv as With does.
func (is *Issuer) Claims(sub, aud string, kv ...any) map[string]any {
	now := time.Now()
	return With(map[string]any{"iss": is.URL, "sub": sub, "aud": aud, "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()}, kv...)
}

// With returns a copy of m with the pairs key, value of kv set; a nil
// value deletes the key.
func With(m map[string]any, kv ...any) map[string]any {
	c := make(map[string]any, len(m)+len(kv)/2)
	for k, v := range m {
		c[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

// Post sends an MCP ping as a POST to url with tok as Bearer token
// (none if empty); it returns the response and the first 4 KiB of its
// body, which it closes.
func Post(t testing.TB, url, tok string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	return resp, string(b)
}

// BearerChallenge parses the response's WWW-Authenticate with the
// go-sdk's own parser and returns the Bearer challenge's parameters; it
// fails the test if there is none.
func BearerChallenge(t testing.TB, resp *http.Response) map[string]string {
	t.Helper()
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		t.Fatalf("WWW-Authenticate %q: %v", resp.Header.Values("WWW-Authenticate"), err)
	}
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return c.Params
		}
	}
	t.Fatalf("no Bearer challenge in %q", resp.Header.Values("WWW-Authenticate"))
	return nil
}
