package mcpserver_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// testIssuer is an OAuth authorization server as far as a resource server
// sees one: signing keys (RSA, ECDSA P-256, Ed25519) and their JWKS,
// served over HTTP, which can be switched off; it counts the fetches.
type testIssuer struct {
	url     string
	keys    map[string]crypto.Signer // kid → private key
	algs    map[string]jose.SignatureAlgorithm
	fetches atomic.Int32
	down    atomic.Bool
	mu      sync.Mutex
	set     []byte
}

func newTestIssuer(t *testing.T) *testIssuer {
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
	is := &testIssuer{
		keys: map[string]crypto.Signer{"rsa1": rk, "ec1": ek, "ed1": dk},
		algs: map[string]jose.SignatureAlgorithm{"rsa1": jose.RS256, "ec1": jose.ES256, "ed1": jose.EdDSA},
	}
	is.publish("rsa1", "ec1", "ed1")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.fetches.Add(1)
		if is.down.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		is.mu.Lock()
		b := is.set
		is.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(ts.Close)
	is.url = ts.URL
	return is
}

// publish sets the JWKS to the public keys of kids.
func (is *testIssuer) publish(kids ...string) {
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

// sign returns a JWT with claims, signed by the key kid (header kid
// hdrKid, if not empty, else kid).
func (is *testIssuer) sign(t *testing.T, kid, hdrKid string, claims map[string]any) string {
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

// claims are valid claims for subject sub and audience aud.
func (is *testIssuer) claims(sub, aud string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": is.url, "sub": sub, "aud": aud, "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

func with(m map[string]any, kv ...any) map[string]any {
	c := map[string]any{}
	for k, v := range m {
		c[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

const aliceOnly = `version: 1
rules:
  - name: alice-ping
    tools: [ping]
    allowed_callers: [direct, code]
    when: 'principal.id == "jwt:alice"'
    message: only alice may ping
`

// jwtServer serves the demo tools over HTTP, with one static token
// (principal "fiona") and JWTs from is, at a public URL that is the test
// server's own.
func jwtServer(t *testing.T, is *testIssuer, jc mcpserver.JWTConfig) (*httptest.Server, *mcpserver.Server) {
	t.Helper()
	return jwtServerPolicy(t, is, jc, aliceOnly)
}

func jwtServerPolicy(t *testing.T, is *testIssuer, jc mcpserver.JWTConfig, pol string) (*httptest.Server, *mcpserver.Server) {
	t.Helper()
	cat, err := tools.NewCatalog(demo.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	broker, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat, Authorizer: mustPolicy(t, pol)})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	jc.JWKSURL, jc.Issuer = is.url, is.url
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Logger: slog.New(slog.DiscardHandler),
		Tokens: []mcpserver.Token{{SHA256: mcpserver.HashToken("static-token"), Principal: bindings.Principal{ID: "fiona"}}},
		Hosted: mcpserver.HostedAuth{JWT: &jc}})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestHTTPServer(t, srv.HTTPHandler())
	if err := srv.SetPublicURL(ts.URL); err != nil {
		t.Fatal(err)
	}
	return ts, srv
}

// post sends an empty MCP POST with the token and returns the response
// (body read and closed).
func post(t *testing.T, url, tok string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	sb.Write(buf[:n])
	resp.Body.Close()
	return resp, sb.String()
}

// bearerChallenge parses the response's WWW-Authenticate with the go-sdk's
// own parser and returns the Bearer challenge's parameters.
func bearerChallenge(t *testing.T, resp *http.Response) map[string]string {
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

func pingAs(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code",
		Arguments: map[string]any{"code": `try { return await tools.ping({n: 1}) } catch (e) { return e.code }`}})
	if err != nil {
		t.Fatal(err)
	}
	return string(decodeStructured[sandbox.Result](t, res).Result)
}

// TestJWTAuthPrincipal: a JWT signed by each key type acts for
// "jwt:<sub>", which the policy sees; static tokens keep working beside.
func TestJWTAuthPrincipal(t *testing.T) {
	is := newTestIssuer(t)
	ts, _ := jwtServer(t, is, mcpserver.JWTConfig{RefreshInterval: time.Hour})
	for _, kid := range []string{"rsa1", "ec1", "ed1"} {
		alice := connectBearer(t, ts.URL+"/mcp", is.sign(t, kid, "", is.claims("alice", ts.URL+"/mcp")))
		if got := pingAs(t, alice); got != "2" {
			t.Errorf("%s: alice: %s", kid, got)
		}
	}
	// No kid: the keys of the algorithm's type are tried.
	noKid, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: is.keys["ec1"]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(noKid).Claims(is.claims("alice", ts.URL+"/mcp")).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	if got := pingAs(t, connectBearer(t, ts.URL+"/mcp", tok)); got != "2" {
		t.Errorf("no kid: alice: %s", got)
	}
	// An array audience naming this resource (with a trailing slash).
	bob := connectBearer(t, ts.URL+"/mcp", is.sign(t, "ec1", "", with(is.claims("bob", ""), "aud", []string{"https://other.example", ts.URL + "/mcp/"})))
	if got := pingAs(t, bob); got != `"E_TOOL_DENIED"` {
		t.Errorf("bob: %s", got)
	}
	// A JWT whose subject is a static principal's ID is still jwt:-named.
	fionaJWT := connectBearer(t, ts.URL+"/mcp", is.sign(t, "rsa1", "", is.claims("fiona", ts.URL)))
	if got := pingAs(t, fionaJWT); got != `"E_TOOL_DENIED"` {
		t.Errorf("jwt fiona: %s", got)
	}
	static := connectBearer(t, ts.URL+"/mcp", "static-token")
	if got := pingAs(t, static); got != `"E_TOOL_DENIED"` {
		t.Errorf("static: %s", got)
	}
	if n := is.fetches.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times, want 1 (cached)", n)
	}
}

// TestJWTAuthRejects: every bad token is 401 with a Bearer challenge that
// names the metadata and says invalid_token, with a description.
func TestJWTAuthRejects(t *testing.T) {
	is := newTestIssuer(t)
	ts, _ := jwtServer(t, is, mcpserver.JWTConfig{RefreshInterval: time.Hour})
	aud := ts.URL + "/mcp"
	good := is.claims("alice", aud)
	other := newTestIssuer(t) // same kids, other keys
	b64 := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(good)
	none := b64([]byte(`{"alg":"none","kid":"rsa1","typ":"JWT"}`)) + "." + b64(payload) + "."
	hs, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")},
		(&jose.SignerOptions{}).WithHeader("kid", "rsa1"))
	if err != nil {
		t.Fatal(err)
	}
	hsTok, err := jwt.Signed(hs).Claims(good).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	hour := time.Hour
	cases := []struct{ name, tok, desc string }{
		{"expired", is.sign(t, "rsa1", "", with(good, "exp", time.Now().Add(-hour).Unix(), "iat", time.Now().Add(-2*hour).Unix(), "nbf", nil)), "expired"},
		{"no exp", is.sign(t, "rsa1", "", with(good, "exp", nil)), "no expiry"},
		{"not yet", is.sign(t, "ec1", "", with(good, "nbf", time.Now().Add(hour).Unix())), "not valid yet"},
		{"iat future", is.sign(t, "ec1", "", with(good, "iat", time.Now().Add(hour).Unix())), "issued in the future"},
		{"wrong issuer", is.sign(t, "ed1", "", with(good, "iss", "https://evil.example")), "issuer"},
		{"wrong audience", is.sign(t, "rsa1", "", with(good, "aud", "https://other.example/mcp")), "audience"},
		{"no audience", is.sign(t, "rsa1", "", with(good, "aud", nil)), "audience"},
		{"wrong key", other.sign(t, "rsa1", "", good), "signature"},
		{"alg none", none, "algorithm"},
		{"HS256", hsTok, "algorithm"},
		{"no sub", is.sign(t, "ed1", "", with(good, "sub", nil)), "sub claim"},
		{"garbage", "a.b.c", "well-formed"},
		{"unknown static", "not-a-token", "unknown bearer token"},
	}
	for _, c := range cases {
		resp, body := post(t, aud, c.tok)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
			continue
		}
		p := bearerChallenge(t, resp)
		if p["error"] != "invalid_token" || !strings.Contains(p["error_description"], c.desc) {
			t.Errorf("%s: challenge %v, want invalid_token about %q", c.name, p, c.desc)
		}
		if p["resource_metadata"] != ts.URL+"/.well-known/oauth-protected-resource/mcp" {
			t.Errorf("%s: resource_metadata %q", c.name, p["resource_metadata"])
		}
		if strings.Contains(body, c.tok) && c.tok != "" {
			t.Errorf("%s: the body echoes the token", c.name)
		}
	}
	// No token at all: a challenge without an error code (RFC 6750 §3.1).
	resp, _ := post(t, aud, "")
	if p := bearerChallenge(t, resp); resp.StatusCode != 401 || p["error"] != "" || p["resource_metadata"] == "" {
		t.Errorf("no token: %d %v", resp.StatusCode, p)
	}
}

// TestJWTAuthUnknownKid: a token naming a kid the server does not know
// triggers one JWKS refresh (a key rotation is picked up at once), and no
// more within the refresh interval however many forged kids arrive.
func TestJWTAuthUnknownKid(t *testing.T) {
	is := newTestIssuer(t)
	is.publish("rsa1")
	ts, _ := jwtServer(t, is, mcpserver.JWTConfig{RefreshInterval: time.Hour})
	aud := ts.URL + "/mcp"
	if resp, body := post(t, aud, is.sign(t, "rsa1", "", is.claims("alice", aud))); resp.StatusCode != 200 {
		t.Fatalf("first token: %d %s", resp.StatusCode, body)
	}
	// Rotation: ec1 is published after the first fetch.
	is.publish("rsa1", "ec1")
	if resp, body := post(t, aud, is.sign(t, "ec1", "", is.claims("alice", aud))); resp.StatusCode != 200 {
		t.Fatalf("rotated key: %d %s", resp.StatusCode, body)
	}
	if n := is.fetches.Load(); n != 2 {
		t.Fatalf("fetches after a rotation: %d, want 2", n)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			resp, _ := post(t, aud, is.sign(t, "ed1", "forged-"+string(rune('a'+i)), is.claims("alice", aud)))
			if p := bearerChallenge(t, resp); resp.StatusCode != 401 || !strings.Contains(p["error_description"], "kid") {
				t.Errorf("forged kid: %d %v", resp.StatusCode, p)
			}
		})
	}
	wg.Wait()
	if n := is.fetches.Load(); n != 2 {
		t.Errorf("fetches after 20 forged kids within the interval: %d, want still 2", n)
	}
}

// TestJWTAuthKeysDown: with the JWKS unreachable before any fetch, a JWT
// gets 503 + Retry-After (the token may be good), the server stays up and
// static tokens work; once the JWKS is back, JWTs are accepted; known
// keys are kept when a later refresh fails.
func TestJWTAuthKeysDown(t *testing.T) {
	is := newTestIssuer(t)
	is.publish("rsa1")
	is.down.Store(true)
	ts, _ := jwtServer(t, is, mcpserver.JWTConfig{RefreshInterval: time.Nanosecond})
	aud := ts.URL + "/mcp"
	tok := is.sign(t, "rsa1", "", is.claims("alice", aud))
	resp, body := post(t, aud, tok)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "signing keys") {
		t.Errorf("JWKS down: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if strings.Contains(body, is.url) {
		t.Errorf("the body names the JWKS URL: %s", body)
	}
	if resp, body := post(t, aud, "static-token"); resp.StatusCode != 200 {
		t.Errorf("static token while the JWKS is down: %d %s", resp.StatusCode, body)
	}
	is.down.Store(false)
	if resp, body := post(t, aud, tok); resp.StatusCode != 200 {
		t.Errorf("JWKS back: %d %s", resp.StatusCode, body)
	}
	// Down again: the known key still verifies; an unknown kid cannot be
	// looked up, so 503.
	is.down.Store(true)
	if resp, body := post(t, aud, tok); resp.StatusCode != 200 {
		t.Errorf("stale key kept: %d %s", resp.StatusCode, body)
	}
	if resp, _ := post(t, aud, is.sign(t, "ed1", "", is.claims("alice", aud))); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("unknown kid with the JWKS down: %d", resp.StatusCode)
	}
}

// TestJWTAuthScopes: required scopes missing → 403 insufficient_scope.
func TestJWTAuthScopes(t *testing.T) {
	is := newTestIssuer(t)
	ts, _ := jwtServer(t, is, mcpserver.JWTConfig{Scopes: []string{"mcp:run"}})
	aud := ts.URL + "/mcp"
	resp, _ := post(t, aud, is.sign(t, "ec1", "", with(is.claims("alice", aud), "scope", "read")))
	if p := bearerChallenge(t, resp); resp.StatusCode != 403 || p["error"] != "insufficient_scope" || p["scope"] != "mcp:run" {
		t.Errorf("missing scope: %d %v", resp.StatusCode, p)
	}
	if resp, body := post(t, aud, is.sign(t, "ec1", "", with(is.claims("alice", aud), "scope", "read mcp:run"))); resp.StatusCode != 200 {
		t.Errorf("with scope: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, aud, is.sign(t, "ec1", "", with(is.claims("alice", aud), "scp", []string{"mcp:run"}))); resp.StatusCode != 200 {
		t.Errorf("scp array: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, aud, "static-token"); resp.StatusCode != 200 {
		t.Errorf("static token: %d %s", resp.StatusCode, body)
	}
}

// TestResourceMetadataDiscovery: a client that follows the 401's
// resource_metadata with the go-sdk's own helper gets metadata whose
// resource is the MCP endpoint and whose authorization server is the
// issuer; the root document names the root.
func TestResourceMetadataDiscovery(t *testing.T) {
	is := newTestIssuer(t)
	ts, _ := jwtServer(t, is, mcpserver.JWTConfig{})
	resp, _ := post(t, ts.URL+"/mcp", "")
	p := bearerChallenge(t, resp)
	prm, err := oauthex.GetProtectedResourceMetadata(context.Background(), p["resource_metadata"], ts.URL+"/mcp", http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	if len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != is.url || len(prm.BearerMethodsSupported) != 1 || prm.BearerMethodsSupported[0] != "header" {
		t.Errorf("metadata %+v", prm)
	}
	if _, err := oauthex.GetProtectedResourceMetadata(context.Background(), ts.URL+"/.well-known/oauth-protected-resource", ts.URL, http.DefaultClient); err != nil {
		t.Errorf("root metadata: %v", err)
	}
}

// TestJWTConfigErrors: bad configurations fail New with a clear message.
func TestJWTConfigErrors(t *testing.T) {
	runner := newRunner(t)
	cases := []struct {
		h    mcpserver.HostedAuth
		want string
	}{
		{mcpserver.HostedAuth{JWT: &mcpserver.JWTConfig{Issuer: "https://i.example"}}, "JWKS URL"},
		{mcpserver.HostedAuth{JWT: &mcpserver.JWTConfig{JWKSURL: "https://i.example/jwks"}}, "issuer"},
		{mcpserver.HostedAuth{JWT: &mcpserver.JWTConfig{JWKSURL: "http://i.example/jwks", Issuer: "https://i.example"}}, "plain HTTP"},
		{mcpserver.HostedAuth{JWT: &mcpserver.JWTConfig{JWKSURL: "https://i.example/jwks", Issuer: "https://i.example", Algorithms: []string{"none"}}}, "none"},
		{mcpserver.HostedAuth{JWT: &mcpserver.JWTConfig{JWKSURL: "https://i.example/jwks", Issuer: "https://i.example", Algorithms: []string{"HS256"}}}, "HMAC"},
		{mcpserver.HostedAuth{JWT: &mcpserver.JWTConfig{JWKSURL: "https://i.example/jwks", Issuer: "https://i.example"}, PublicURL: "https://x.example/mcp"}, "no path"},
	}
	for _, c := range cases {
		_, err := mcpserver.New(mcpserver.Config{Runner: runner, Hosted: c.h})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.h.JWT, err, c.want)
		}
	}
	_, err := mcpserver.New(mcpserver.Config{Runner: runner,
		Tokens: []mcpserver.Token{{SHA256: mcpserver.HashToken("x"), Principal: bindings.Principal{ID: "jwt:alice"}}},
		Hosted: mcpserver.HostedAuth{JWT: &mcpserver.JWTConfig{JWKSURL: "https://i.example/jwks", Issuer: "https://i.example"}}})
	if err == nil || !strings.Contains(err.Error(), `"jwt:"`) {
		t.Errorf("static jwt: principal: %v", err)
	}
}

// TestJWTAuthKeysHang: a JWKS that never answers costs a request the
// fetch timeout, then 503; the server keeps serving meanwhile.
func TestJWTAuthKeysHang(t *testing.T) {
	is := newTestIssuer(t)
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); hung.Close() })
	cat, err := tools.NewCatalog(demo.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	broker, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Logger: slog.New(slog.DiscardHandler),
		Tokens: []mcpserver.Token{{SHA256: mcpserver.HashToken("static-token"), Principal: bindings.Principal{ID: "fiona"}}},
		Hosted: mcpserver.HostedAuth{PublicURL: "https://sandcall.test", JWT: &mcpserver.JWTConfig{JWKSURL: hung.URL, Issuer: is.url,
			HTTPClient: &http.Client{Timeout: 200 * time.Millisecond}}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestHTTPServer(t, srv.HTTPHandler())
	done := make(chan int)
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+is.sign(t, "rsa1", "", is.claims("alice", "https://sandcall.test/mcp")))
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-arrived // the fetch hangs now
	if resp, body := post(t, ts.URL+"/mcp", "static-token"); resp.StatusCode != 200 {
		t.Errorf("static token while a JWKS fetch hangs: %d %s", resp.StatusCode, body)
	}
	if code := <-done; code != http.StatusServiceUnavailable {
		t.Errorf("JWKS hangs: %d, want 503 after the fetch timeout", code)
	}
}

// TestJWTOutputRefBoundToPrincipal: a read_output ref issued to jwt:alice
// is readable with another token of hers (a new session), and not by the
// static principal "alice" nor by jwt:bob: the namespaces do not meet.
func TestJWTOutputRefBoundToPrincipal(t *testing.T) {
	is := newTestIssuer(t)
	cat, err := tools.NewCatalog(demo.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	broker, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{}),
		Limits: sandbox.Limits{MaxResultBytes: 1 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Logger: slog.New(slog.DiscardHandler),
		Tokens: []mcpserver.Token{{SHA256: mcpserver.HashToken("alice-static"), Principal: bindings.Principal{ID: "alice"}}},
		Hosted: mcpserver.HostedAuth{PublicURL: "https://sandcall.test", JWT: &mcpserver.JWTConfig{JWKSURL: is.url, Issuer: is.url}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestHTTPServer(t, srv.HTTPHandler())
	aud := "https://sandcall.test/mcp"
	alice := connectBearer(t, ts.URL+"/mcp", is.sign(t, "rsa1", "", is.claims("alice", aud)))
	res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code",
		Arguments: map[string]any{"code": `return "x".repeat(5000)`}})
	if err != nil || res.IsError {
		t.Fatalf("run: %v %v", err, res)
	}
	r := decodeStructured[longResult](t, res)
	if r.OutputRef == "" {
		t.Fatalf("want a cut result with a ref, got %+v", r)
	}
	read := func(cs *mcp.ClientSession) *mcp.CallToolResult {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_output",
			Arguments: map[string]any{"ref": r.OutputRef, "offset": r.OutputNextOffset}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	again := connectBearer(t, ts.URL+"/mcp", is.sign(t, "ed1", "", is.claims("alice", aud)))
	if res := read(again); res.IsError {
		t.Fatalf("jwt:alice with another token cannot read her output: %v", res.Content)
	}
	wantCode(t, read(connectBearer(t, ts.URL+"/mcp", "alice-static")), sandbox.EToolArgs)
	wantCode(t, read(connectBearer(t, ts.URL+"/mcp", is.sign(t, "ec1", "", is.claims("bob", aud)))), sandbox.EToolArgs)
}

// TestJWTRolesClaim: with RolesClaim, the claim's values (an array or a
// space-separated string) are the principal's roles a policy reads; a
// custom PrincipalClaim names the principal.
func TestJWTRolesClaim(t *testing.T) {
	is := newTestIssuer(t)
	ts, _ := jwtServerPolicy(t, is, mcpserver.JWTConfig{RolesClaim: "groups", PrincipalClaim: "email"}, financeOnly)
	aud := ts.URL + "/mcp"
	fin := connectBearer(t, aud, is.sign(t, "rsa1", "", with(is.claims("u1", aud), "email", "fiona@example.com", "groups", []string{"staff", "finance"})))
	if got := pingAs(t, fin); got != "2" {
		t.Errorf("finance by array claim: %s", got)
	}
	fin2 := connectBearer(t, aud, is.sign(t, "ec1", "", with(is.claims("u1", aud), "email", "fiona@example.com", "groups", "staff finance")))
	if got := pingAs(t, fin2); got != "2" {
		t.Errorf("finance by string claim: %s", got)
	}
	eng := connectBearer(t, aud, is.sign(t, "ec1", "", with(is.claims("u2", aud), "email", "eddie@example.com", "groups", []string{"eng"})))
	if got := pingAs(t, eng); got != `"E_TOOL_DENIED"` {
		t.Errorf("eng: %s", got)
	}
	resp, _ := post(t, aud, is.sign(t, "ec1", "", is.claims("u3", aud)))
	if p := bearerChallenge(t, resp); resp.StatusCode != 401 || !strings.Contains(p["error_description"], "email claim") {
		t.Errorf("no email claim: %d %v", resp.StatusCode, p)
	}
}
