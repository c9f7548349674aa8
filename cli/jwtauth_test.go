package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/sandcall/sandcall/bindings/mcpserver/jwttest"
)

// runPing connects the go-sdk client with the token in the Authorization
// header and runs a program calling ping; it returns the result.
func runPing(t *testing.T, url, tok string) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerAuth{tok}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"code": `try { return await tools.ping({n: 1}) } catch (e) { return e.code }`}})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Result any }
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &out)
	return out.Result
}

// TestServeJWTAuth: the real binary accepts JWTs from the configured
// issuer beside a static token; the principal jwt:<sub> is what the
// policy sees; bad tokens get 401 with an RFC 6750 challenge pointing at
// the metadata, which the go-sdk's own discovery helper accepts; forged
// kids cause one JWKS refresh, not one each.
func TestServeJWTAuth(t *testing.T) {
	t.Parallel()
	is := jwttest.NewIssuer(t, "rsa1", "ec1")
	other := jwttest.NewIssuer(t) // same kids, other keys
	dir := t.TempDir()
	writeFile(t, dir, "policy.yaml", `version: 1
rules:
  - name: alice-ping
    tools: [ping]
    when: 'principal.id == "jwt:alice"'
    message: only alice may ping
`)
	cfg := writeFile(t, dir, "sandcall.yaml", `version: 1
policy: policy.yaml
auth:
  tokens:
    - sha256: `+hashOf(t, "static-secret-token")+`
      principal: alice
  scopes_supported: mcp          # one string or a list
  jwt:
    jwks_url: `+is.URL+`
    issuer: `+is.URL+`
    refresh_interval: 1h
`)
	url, _ := startHTTP(t, "--demo", "--isolation", "inprocess", "--config", cfg)
	base := strings.TrimSuffix(url, "/mcp")

	if got := runPing(t, url, is.Sign(t, "rsa1", "", is.Claims("alice", url))); got != float64(2) {
		t.Errorf("alice (RS256): %v", got)
	}
	if got := runPing(t, url, is.Sign(t, "ec1", "", is.Claims("alice", url))); got != float64(2) {
		t.Errorf("alice (ES256): %v", got)
	}
	if got := runPing(t, url, is.Sign(t, "ec1", "", is.Claims("bob", url))); got != "E_TOOL_DENIED" {
		t.Errorf("bob: %v", got)
	}
	// The static token's principal "alice" is not "jwt:alice".
	if got := runPing(t, url, "static-secret-token"); got != "E_TOOL_DENIED" {
		t.Errorf("static alice: %v", got)
	}
	if n := is.Fetches.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times for 4 sessions, want 1", n)
	}

	payload, _ := json.Marshal(is.Claims("alice", url))
	b64 := base64.RawURLEncoding.EncodeToString
	hour := time.Hour.Seconds()
	for _, c := range []struct{ name, tok, desc string }{
		{"expired", is.Sign(t, "rsa1", "", is.Claims("alice", url, "exp", time.Now().Unix()-int64(hour), "iat", time.Now().Unix()-2*int64(hour), "nbf", nil)), "expired"},
		{"wrong issuer", is.Sign(t, "rsa1", "", is.Claims("alice", url, "iss", "https://evil.example")), "issuer"},
		{"wrong audience", is.Sign(t, "rsa1", "", is.Claims("alice", "https://other.example/mcp")), "audience"},
		{"wrong key", other.Sign(t, "rsa1", "", is.Claims("alice", url)), "signature"},
		{"alg none", b64([]byte(`{"alg":"none","typ":"JWT","kid":"rsa1"}`)) + "." + b64(payload) + ".", "algorithm"},
		{"unknown kid", is.Sign(t, "ed1", "", is.Claims("alice", url)), "kid"},
	} {
		resp, body := jwttest.Post(t, url, c.tok)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
			continue
		}
		p := jwttest.BearerChallenge(t, resp)
		if p["error"] != "invalid_token" || !strings.Contains(p["error_description"], c.desc) || p["resource_metadata"] != base+"/.well-known/oauth-protected-resource/mcp" {
			t.Errorf("%s: challenge %v", c.name, p)
		}
	}
	for i := range 10 {
		resp, _ := jwttest.Post(t, url, is.Sign(t, "ed1", "forged"+string(rune('0'+i)), is.Claims("alice", url)))
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("forged kid %d: %d", i, resp.StatusCode)
		}
	}
	if n := is.Fetches.Load(); n != 2 {
		t.Errorf("JWKS fetches after 11 unknown kids: %d, want 2 (one refresh, then rate-limited)", n)
	}

	// Discovery as a client does it, with the go-sdk's helpers: parse the
	// 401's challenge, fetch the metadata it names, check the resource.
	resp, _ := jwttest.Post(t, url, "")
	p := jwttest.BearerChallenge(t, resp)
	if resp.StatusCode != 401 || p["error"] != "" {
		t.Errorf("no token: %d %v", resp.StatusCode, p)
	}
	prm, err := oauthex.GetProtectedResourceMetadata(context.Background(), p["resource_metadata"], url, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	if prm.Resource != url || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != is.URL ||
		len(prm.ScopesSupported) != 1 || prm.ScopesSupported[0] != "mcp" {
		t.Errorf("metadata %+v", prm)
	}
	if _, err := oauthex.GetProtectedResourceMetadata(context.Background(), base+"/.well-known/oauth-protected-resource", base, http.DefaultClient); err != nil {
		t.Errorf("root metadata: %v", err)
	}
}

// TestServeJWTAuthKeysDown: flags over the config; the JWKS is down when
// the first token arrives: 503 with Retry-After and a message naming the
// cause, the server stays up (static requests are not affected by it: none
// configured here, so a no-token request still gets its 401), and once
// the JWKS is back the same token works without a restart.
func TestServeJWTAuthKeysDown(t *testing.T) {
	t.Parallel()
	is := jwttest.NewIssuer(t, "ed1")
	is.Down.Store(true)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sandcall.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\nauth:\n  jwt:\n    jwks_url: "+is.URL+"\n    issuer: "+is.URL+"\n    refresh_interval: 1ns\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _ := startHTTP(t, "--demo", "--isolation", "inprocess", "--config", cfg,
		"--auth-jwks-url", is.URL, "--auth-issuer", is.URL, "--public-url", "http://sandcall.test:8080", "--auth-audience", "sandcall-tests")
	tok := is.Sign(t, "ed1", "", is.Claims("alice", "sandcall-tests"))
	resp, body := jwttest.Post(t, url, tok)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "signing keys") {
		t.Errorf("JWKS down: %d Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if strings.Contains(body, is.URL) {
		t.Errorf("the 503 names the JWKS URL: %s", body)
	}
	resp, _ = jwttest.Post(t, url, "")
	if p := jwttest.BearerChallenge(t, resp); resp.StatusCode != 401 || p["resource_metadata"] != "http://sandcall.test:8080/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("no token while the JWKS is down: %d %v", resp.StatusCode, p)
	}
	is.Down.Store(false)
	if got := runPing(t, url, tok); got != float64(2) {
		t.Errorf("after the JWKS came back: %v", got)
	}
	// The public URL's audience is not accepted when an audience is set.
	resp, _ = jwttest.Post(t, url, is.Sign(t, "ed1", "", is.Claims("alice", "http://sandcall.test:8080/mcp")))
	if p := jwttest.BearerChallenge(t, resp); resp.StatusCode != 401 || !strings.Contains(p["error_description"], "audience") {
		t.Errorf("public URL audience with --auth-audience set: %d %v", resp.StatusCode, p)
	}
}

// TestServeJWTAuthConfigErrors: bad hosted-auth settings stop serve with a
// message naming the key.
func TestServeJWTAuthConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct{ yaml, want string }{
		{"auth:\n  jwt:\n    jwks_url: https://idp.example/jwks\n", "auth.jwt.issuer"},
		{"auth:\n  jwt:\n    issuer: https://idp.example/\n", "auth.jwt.jwks_url"},
		{"auth:\n  jwt:\n    jwks_url: https://idp.example/jwks\n    issuer: https://idp.example/\n    leeway: soon\n", "auth.jwt.leeway"},
		{"auth:\n  jwt:\n    jwks_url: https://idp.example/jwks\n    issuer: https://idp.example/\n    algorithms: [none]\n", "none"},
		{"auth:\n  jwt:\n    jwks_url: http://idp.example/jwks\n    issuer: https://idp.example/\n", "plain HTTP"},
		{"auth:\n  jwt:\n    jwks_url: https://idp.example/jwks\n    issuer: https://idp.example/\n    audiences: [x]\n", "unknown key"},
	} {
		cfg := filepath.Join(dir, "sandcall.yaml")
		if err := os.WriteFile(cfg, []byte("version: 1\n"+c.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := sandcall(t, "", "serve", "--demo", "--isolation", "inprocess", "--config", cfg, "--http", "127.0.0.1:0")
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %s; want %q", c.yaml, code, stderr, c.want)
		}
	}
	_, stderr, code := sandcall(t, "", "serve", "--demo", "--http", "0.0.0.0:0", "--allow-remote",
		"--auth-jwks-url", "https://idp.example/jwks", "--auth-issuer", "https://idp.example/")
	if code == 0 || !strings.Contains(stderr, "--public-url") {
		t.Errorf("remote JWT without a public URL: exit %d, %s", code, stderr)
	}
	_, stderr, code = sandcall(t, "", "serve", "--demo", "--auth-jwks-url", "https://idp.example/jwks")
	if code != exitUsage || !strings.Contains(stderr, "need --http") {
		t.Errorf("JWT flags over stdio: exit %d, %s", code, stderr)
	}
}

// TestTypeScriptSDKJWT: the official TypeScript SDK's OAuth discovery
// (WWW-Authenticate parsing, RFC 9728 metadata discovery with and without
// the hint, resource selection) accepts what sandcall serves, and its
// streamable HTTP client runs a program with a JWT as jwt:alice.
func TestTypeScriptSDKJWT(t *testing.T) {
	t.Parallel()
	node, client := tsSDKScript(t, "ts_jwt_client.mjs")
	is := jwttest.NewIssuer(t, "ec1")
	cfgDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfgDir, "policy.yaml"), []byte(`version: 1
rules:
  - name: alice-ping
    tools: [ping]
    when: 'principal.id == "jwt:alice"'
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(cfgDir, "sandcall.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\npolicy: policy.yaml\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _ := startHTTP(t, "--demo", "--isolation", "inprocess", "--config", cfg, "--auth-jwks-url", is.URL, "--auth-issuer", is.URL)
	base := strings.TrimSuffix(url, "/mcp")
	good := is.Sign(t, "ec1", "", is.Claims("alice", url))
	bad := is.Sign(t, "ec1", "", is.Claims("alice", "https://other.example/mcp"))

	stdout, stderr := runTSClient(t, node, client, url, good, bad)
	var got struct {
		Anon struct {
			Status              int
			ResourceMetadataURL string
			Error               *string
		}
		Hinted struct {
			Resource             string
			AuthorizationServers []string
		}
		PathAware struct{ Resource string }
		Resource  string
		Bad       struct {
			Status int
			Error  string
		}
		Run struct {
			OK     bool
			Result any
		}
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("ts client output %q: %v (stderr %s)", stdout, err, stderr)
	}
	if got.Anon.Status != 401 || got.Anon.ResourceMetadataURL != base+"/.well-known/oauth-protected-resource/mcp" || got.Anon.Error != nil {
		t.Errorf("no token: %+v", got.Anon)
	}
	if got.Hinted.Resource != url || len(got.Hinted.AuthorizationServers) != 1 || got.Hinted.AuthorizationServers[0] != is.URL {
		t.Errorf("metadata from the hint: %+v", got.Hinted)
	}
	if got.PathAware.Resource != url || got.Resource != url {
		t.Errorf("path-aware discovery %q, resource indicator %q; want %q", got.PathAware.Resource, got.Resource, url)
	}
	if got.Bad.Status != 401 || got.Bad.Error != "invalid_token" {
		t.Errorf("bad token: %+v", got.Bad)
	}
	if !got.Run.OK || got.Run.Result != float64(2) {
		t.Errorf("run as jwt:alice: %+v", got.Run)
	}
}
