package mcpserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
	"github.com/sandcall/sandcall/bindings/mcpserver/jwttest"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/sandbox"
)

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
func jwtServer(t *testing.T, is *jwttest.Issuer, jc bearer.JWTConfig) (*httptest.Server, *mcpserver.Server) {
	t.Helper()
	return jwtServerPolicy(t, is, jc, aliceOnly)
}

func jwtServerPolicy(t *testing.T, is *jwttest.Issuer, jc bearer.JWTConfig, pol string) (*httptest.Server, *mcpserver.Server) {
	t.Helper()
	runner := newPipeline(t, bindings.BrokerConfig{Authorizer: mustPolicy(t, pol)}, bindings.RunnerConfig{}, demo.Tools()...)
	jc.JWKSURL, jc.Issuer = is.URL, is.URL
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Logger: slog.New(slog.DiscardHandler),
		Tokens: []bearer.Token{{SHA256: bearer.HashToken("static-token"), Principal: bindings.Principal{ID: "fiona"}}},
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
	is := jwttest.NewIssuer(t, jwttest.Kids...)
	ts, _ := jwtServer(t, is, bearer.JWTConfig{RefreshInterval: time.Hour})
	for _, kid := range []string{"rsa1", "ec1", "ed1"} {
		alice := connectBearer(t, ts.URL+"/mcp", is.Sign(t, kid, "", is.Claims("alice", ts.URL+"/mcp")))
		if got := pingAs(t, alice); got != "2" {
			t.Errorf("%s: alice: %s", kid, got)
		}
	}
	// No kid: the keys of the algorithm's type are tried.
	noKid, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: is.Key("ec1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(noKid).Claims(is.Claims("alice", ts.URL+"/mcp")).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	if got := pingAs(t, connectBearer(t, ts.URL+"/mcp", tok)); got != "2" {
		t.Errorf("no kid: alice: %s", got)
	}
	// An array audience naming this resource (with a trailing slash).
	bob := connectBearer(t, ts.URL+"/mcp", is.Sign(t, "ec1", "", is.Claims("bob", "", "aud", []string{"https://other.example", ts.URL + "/mcp/"})))
	if got := pingAs(t, bob); got != `"E_TOOL_DENIED"` {
		t.Errorf("bob: %s", got)
	}
	// A JWT whose subject is a static principal's ID is still jwt:-named.
	fionaJWT := connectBearer(t, ts.URL+"/mcp", is.Sign(t, "rsa1", "", is.Claims("fiona", ts.URL)))
	if got := pingAs(t, fionaJWT); got != `"E_TOOL_DENIED"` {
		t.Errorf("jwt fiona: %s", got)
	}
	static := connectBearer(t, ts.URL+"/mcp", "static-token")
	if got := pingAs(t, static); got != `"E_TOOL_DENIED"` {
		t.Errorf("static: %s", got)
	}
	if n := is.Fetches.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times, want 1 (cached)", n)
	}
}

// TestJWTAuthRejects: every bad token is 401 with a Bearer challenge that
// names the metadata and says invalid_token, with a description.
func TestJWTAuthRejects(t *testing.T) {
	is := jwttest.NewIssuer(t, jwttest.Kids...)
	ts, _ := jwtServer(t, is, bearer.JWTConfig{RefreshInterval: time.Hour})
	aud := ts.URL + "/mcp"
	good := is.Claims("alice", aud)
	other := jwttest.NewIssuer(t, jwttest.Kids...) // same kids, other keys
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
		{"expired", is.Sign(t, "rsa1", "", jwttest.With(good, "exp", time.Now().Add(-hour).Unix(), "iat", time.Now().Add(-2*hour).Unix(), "nbf", nil)), "expired"},
		{"no exp", is.Sign(t, "rsa1", "", jwttest.With(good, "exp", nil)), "no expiry"},
		{"not yet", is.Sign(t, "ec1", "", jwttest.With(good, "nbf", time.Now().Add(hour).Unix())), "not valid yet"},
		{"iat future", is.Sign(t, "ec1", "", jwttest.With(good, "iat", time.Now().Add(hour).Unix())), "issued in the future"},
		{"wrong issuer", is.Sign(t, "ed1", "", jwttest.With(good, "iss", "https://evil.example")), "issuer"},
		{"wrong audience", is.Sign(t, "rsa1", "", jwttest.With(good, "aud", "https://other.example/mcp")), "audience"},
		{"no audience", is.Sign(t, "rsa1", "", jwttest.With(good, "aud", nil)), "audience"},
		{"wrong key", other.Sign(t, "rsa1", "", good), "signature"},
		{"alg none", none, "algorithm"},
		{"HS256", hsTok, "algorithm"},
		{"no sub", is.Sign(t, "ed1", "", jwttest.With(good, "sub", nil)), "sub claim"},
		{"garbage", "a.b.c", "well-formed"},
		{"unknown static", "not-a-token", "unknown bearer token"},
	}
	for _, c := range cases {
		resp, body := jwttest.Post(t, aud, c.tok)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
			continue
		}
		p := jwttest.BearerChallenge(t, resp)
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
	resp, _ := jwttest.Post(t, aud, "")
	if p := jwttest.BearerChallenge(t, resp); resp.StatusCode != 401 || p["error"] != "" || p["resource_metadata"] == "" {
		t.Errorf("no token: %d %v", resp.StatusCode, p)
	}
}

// TestJWTAuthUnknownKid: a token naming a kid the server does not know
// triggers one JWKS refresh (a key rotation is picked up at once), and no
// more within the refresh interval however many forged kids arrive.
func TestJWTAuthUnknownKid(t *testing.T) {
	is := jwttest.NewIssuer(t, jwttest.Kids...)
	is.Publish("rsa1")
	ts, _ := jwtServer(t, is, bearer.JWTConfig{RefreshInterval: time.Hour})
	aud := ts.URL + "/mcp"
	if resp, body := jwttest.Post(t, aud, is.Sign(t, "rsa1", "", is.Claims("alice", aud))); resp.StatusCode != 200 {
		t.Fatalf("first token: %d %s", resp.StatusCode, body)
	}
	// Rotation: ec1 is published after the first fetch.
	is.Publish("rsa1", "ec1")
	if resp, body := jwttest.Post(t, aud, is.Sign(t, "ec1", "", is.Claims("alice", aud))); resp.StatusCode != 200 {
		t.Fatalf("rotated key: %d %s", resp.StatusCode, body)
	}
	if n := is.Fetches.Load(); n != 2 {
		t.Fatalf("fetches after a rotation: %d, want 2", n)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			resp, _ := jwttest.Post(t, aud, is.Sign(t, "ed1", "forged-"+string(rune('a'+i)), is.Claims("alice", aud)))
			if p := jwttest.BearerChallenge(t, resp); resp.StatusCode != 401 || !strings.Contains(p["error_description"], "kid") {
				t.Errorf("forged kid: %d %v", resp.StatusCode, p)
			}
		})
	}
	wg.Wait()
	if n := is.Fetches.Load(); n != 2 {
		t.Errorf("fetches after 20 forged kids within the interval: %d, want still 2", n)
	}
}

// TestJWTAuthKeysDown: with the JWKS unreachable before any fetch, a JWT
// gets 503 + Retry-After (the token may be good), the server stays up and
// static tokens work; once the JWKS is back, JWTs are accepted; known
// keys are kept when a later refresh fails.
func TestJWTAuthKeysDown(t *testing.T) {
	is := jwttest.NewIssuer(t, jwttest.Kids...)
	is.Publish("rsa1")
	is.Down.Store(true)
	ts, _ := jwtServer(t, is, bearer.JWTConfig{RefreshInterval: time.Nanosecond})
	aud := ts.URL + "/mcp"
	tok := is.Sign(t, "rsa1", "", is.Claims("alice", aud))
	resp, body := jwttest.Post(t, aud, tok)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "signing keys") {
		t.Errorf("JWKS down: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if strings.Contains(body, is.URL) {
		t.Errorf("the body names the JWKS URL: %s", body)
	}
	if resp, body := jwttest.Post(t, aud, "static-token"); resp.StatusCode != 200 {
		t.Errorf("static token while the JWKS is down: %d %s", resp.StatusCode, body)
	}
	is.Down.Store(false)
	if resp, body := jwttest.Post(t, aud, tok); resp.StatusCode != 200 {
		t.Errorf("JWKS back: %d %s", resp.StatusCode, body)
	}
	// Down again: the known key still verifies; an unknown kid cannot be
	// looked up, so 503.
	is.Down.Store(true)
	if resp, body := jwttest.Post(t, aud, tok); resp.StatusCode != 200 {
		t.Errorf("stale key kept: %d %s", resp.StatusCode, body)
	}
	if resp, _ := jwttest.Post(t, aud, is.Sign(t, "ed1", "", is.Claims("alice", aud))); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("unknown kid with the JWKS down: %d", resp.StatusCode)
	}
}

// TestJWTAuthScopes: required scopes missing → 403 insufficient_scope.
func TestJWTAuthScopes(t *testing.T) {
	is := jwttest.NewIssuer(t, jwttest.Kids...)
	ts, _ := jwtServer(t, is, bearer.JWTConfig{Scopes: []string{"mcp:run"}})
	aud := ts.URL + "/mcp"
	resp, _ := jwttest.Post(t, aud, is.Sign(t, "ec1", "", is.Claims("alice", aud, "scope", "read")))
	if p := jwttest.BearerChallenge(t, resp); resp.StatusCode != 403 || p["error"] != "insufficient_scope" || p["scope"] != "mcp:run" {
		t.Errorf("missing scope: %d %v", resp.StatusCode, p)
	}
	if resp, body := jwttest.Post(t, aud, is.Sign(t, "ec1", "", is.Claims("alice", aud, "scope", "read mcp:run"))); resp.StatusCode != 200 {
		t.Errorf("with scope: %d %s", resp.StatusCode, body)
	}
	if resp, body := jwttest.Post(t, aud, is.Sign(t, "ec1", "", is.Claims("alice", aud, "scp", []string{"mcp:run"}))); resp.StatusCode != 200 {
		t.Errorf("scp array: %d %s", resp.StatusCode, body)
	}
	if resp, body := jwttest.Post(t, aud, "static-token"); resp.StatusCode != 200 {
		t.Errorf("static token: %d %s", resp.StatusCode, body)
	}
}

// TestResourceMetadataDiscovery: a client that follows the 401's
// resource_metadata with the go-sdk's own helper gets metadata whose
// resource is the MCP endpoint and whose authorization server is the
// issuer; the root document names the root.
func TestResourceMetadataDiscovery(t *testing.T) {
	is := jwttest.NewIssuer(t, jwttest.Kids...)
	ts, _ := jwtServer(t, is, bearer.JWTConfig{})
	resp, _ := jwttest.Post(t, ts.URL+"/mcp", "")
	p := jwttest.BearerChallenge(t, resp)
	prm, err := oauthex.GetProtectedResourceMetadata(context.Background(), p["resource_metadata"], ts.URL+"/mcp", http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	if len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != is.URL || len(prm.BearerMethodsSupported) != 1 || prm.BearerMethodsSupported[0] != "header" {
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
		{mcpserver.HostedAuth{JWT: &bearer.JWTConfig{Issuer: "https://i.example"}}, "JWKS URL"},
		{mcpserver.HostedAuth{JWT: &bearer.JWTConfig{JWKSURL: "https://i.example/jwks"}}, "issuer"},
		{mcpserver.HostedAuth{JWT: &bearer.JWTConfig{JWKSURL: "http://i.example/jwks", Issuer: "https://i.example"}}, "plain HTTP"},
		{mcpserver.HostedAuth{JWT: &bearer.JWTConfig{JWKSURL: "https://i.example/jwks", Issuer: "https://i.example", Algorithms: []string{"none"}}}, "none"},
		{mcpserver.HostedAuth{JWT: &bearer.JWTConfig{JWKSURL: "https://i.example/jwks", Issuer: "https://i.example", Algorithms: []string{"HS256"}}}, "HMAC"},
		{mcpserver.HostedAuth{JWT: &bearer.JWTConfig{JWKSURL: "https://i.example/jwks", Issuer: "https://i.example"}, PublicURL: "https://x.example/mcp"}, "no path"},
	}
	for _, c := range cases {
		_, err := mcpserver.New(mcpserver.Config{Runner: runner, Hosted: c.h})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.h.JWT, err, c.want)
		}
	}
	_, err := mcpserver.New(mcpserver.Config{Runner: runner,
		Tokens: []bearer.Token{{SHA256: bearer.HashToken("x"), Principal: bindings.Principal{ID: "jwt:alice"}}},
		Hosted: mcpserver.HostedAuth{JWT: &bearer.JWTConfig{JWKSURL: "https://i.example/jwks", Issuer: "https://i.example"}}})
	if err == nil || !strings.Contains(err.Error(), `"jwt:"`) {
		t.Errorf("static jwt: principal: %v", err)
	}
}

// TestJWTAuthKeysHang: a JWKS that never answers costs a request the
// fetch timeout, then 503; the server keeps serving meanwhile.
func TestJWTAuthKeysHang(t *testing.T) {
	is := jwttest.NewIssuer(t, jwttest.Kids...)
	is.Hang.Store(true)
	runner := newPipeline(t, bindings.BrokerConfig{}, bindings.RunnerConfig{}, demo.Tools()...)
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Logger: slog.New(slog.DiscardHandler),
		Tokens: []bearer.Token{{SHA256: bearer.HashToken("static-token"), Principal: bindings.Principal{ID: "fiona"}}},
		Hosted: mcpserver.HostedAuth{PublicURL: "https://sandcall.test", JWT: &bearer.JWTConfig{JWKSURL: is.URL, Issuer: is.URL,
			HTTPClient: &http.Client{Timeout: 200 * time.Millisecond}}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestHTTPServer(t, srv.HTTPHandler())
	done := make(chan int)
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+is.Sign(t, "rsa1", "", is.Claims("alice", "https://sandcall.test/mcp")))
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-is.Arrived // the fetch hangs now
	if resp, body := jwttest.Post(t, ts.URL+"/mcp", "static-token"); resp.StatusCode != 200 {
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
	is := jwttest.NewIssuer(t, jwttest.Kids...)
	runner := newPipeline(t, bindings.BrokerConfig{}, bindings.RunnerConfig{Limits: sandbox.Limits{MaxResultBytes: 1 << 10}}, demo.Tools()...)
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Logger: slog.New(slog.DiscardHandler),
		Tokens: []bearer.Token{{SHA256: bearer.HashToken("alice-static"), Principal: bindings.Principal{ID: "alice"}}},
		Hosted: mcpserver.HostedAuth{PublicURL: "https://sandcall.test", JWT: &bearer.JWTConfig{JWKSURL: is.URL, Issuer: is.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestHTTPServer(t, srv.HTTPHandler())
	aud := "https://sandcall.test/mcp"
	alice := connectBearer(t, ts.URL+"/mcp", is.Sign(t, "rsa1", "", is.Claims("alice", aud)))
	r := cutResult(t, alice)
	read := func(cs *mcp.ClientSession) *mcp.CallToolResult { return readRest(t, cs, r) }
	again := connectBearer(t, ts.URL+"/mcp", is.Sign(t, "ed1", "", is.Claims("alice", aud)))
	if res := read(again); res.IsError {
		t.Fatalf("jwt:alice with another token cannot read her output: %v", res.Content)
	}
	wantCode(t, read(connectBearer(t, ts.URL+"/mcp", "alice-static")), sandbox.EToolArgs)
	wantCode(t, read(connectBearer(t, ts.URL+"/mcp", is.Sign(t, "ec1", "", is.Claims("bob", aud)))), sandbox.EToolArgs)
}

// TestJWTRolesClaim: with RolesClaim, the claim's values (an array or a
// space-separated string) are the principal's roles a policy reads; a
// custom PrincipalClaim names the principal.
func TestJWTRolesClaim(t *testing.T) {
	is := jwttest.NewIssuer(t, jwttest.Kids...)
	ts, _ := jwtServerPolicy(t, is, bearer.JWTConfig{RolesClaim: "groups", PrincipalClaim: "email"}, financeOnly)
	aud := ts.URL + "/mcp"
	fin := connectBearer(t, aud, is.Sign(t, "rsa1", "", is.Claims("u1", aud, "email", "fiona@example.com", "groups", []string{"staff", "finance"})))
	if got := pingAs(t, fin); got != "2" {
		t.Errorf("finance by array claim: %s", got)
	}
	fin2 := connectBearer(t, aud, is.Sign(t, "ec1", "", is.Claims("u1", aud, "email", "fiona@example.com", "groups", "staff finance")))
	if got := pingAs(t, fin2); got != "2" {
		t.Errorf("finance by string claim: %s", got)
	}
	eng := connectBearer(t, aud, is.Sign(t, "ec1", "", is.Claims("u2", aud, "email", "eddie@example.com", "groups", []string{"eng"})))
	if got := pingAs(t, eng); got != `"E_TOOL_DENIED"` {
		t.Errorf("eng: %s", got)
	}
	resp, _ := jwttest.Post(t, aud, is.Sign(t, "ec1", "", is.Claims("u3", aud)))
	if p := jwttest.BearerChallenge(t, resp); resp.StatusCode != 401 || !strings.Contains(p["error_description"], "email claim") {
		t.Errorf("no email claim: %d %v", resp.StatusCode, p)
	}
}
