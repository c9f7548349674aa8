package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// jwtIssuer plays the authorization server: RSA, ECDSA P-256 and Ed25519
// signing keys, generated here, whose public halves it serves as a JWKS
// (switchable off), counting the fetches. Tokens are signed with go-jose.
type jwtIssuer struct {
	url     string
	keys    map[string]crypto.Signer
	algs    map[string]jose.SignatureAlgorithm
	set     atomic.Value // []byte
	fetches atomic.Int32
	down    atomic.Bool
}

func newJWTIssuer(t *testing.T, published ...string) *jwtIssuer {
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
	is := &jwtIssuer{keys: map[string]crypto.Signer{"rsa1": rk, "ec1": ek, "ed1": dk},
		algs: map[string]jose.SignatureAlgorithm{"rsa1": jose.RS256, "ec1": jose.ES256, "ed1": jose.EdDSA}}
	var set jose.JSONWebKeySet
	for _, kid := range published {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: is.keys[kid].Public(), KeyID: kid, Algorithm: string(is.algs[kid]), Use: "sig"})
	}
	b, _ := json.Marshal(set)
	is.set.Store(b)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.fetches.Add(1)
		if is.down.Load() {
			http.Error(w, "maintenance", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Write(is.set.Load().([]byte))
	}))
	t.Cleanup(ts.Close)
	is.url = ts.URL
	return is
}

func (is *jwtIssuer) token(t *testing.T, kid, hdrKid string, claims map[string]any) string {
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

func (is *jwtIssuer) claims(sub, aud string, kv ...any) map[string]any {
	now := time.Now()
	c := map[string]any{"iss": is.url, "sub": sub, "aud": aud, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for i := 0; i < len(kv); i += 2 {
		c[kv[i].(string)] = kv[i+1]
	}
	return c
}

// postStatus POSTs an MCP ping with the token; it returns the response
// and its body.
func postStatus(t *testing.T, url, tok string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
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

func bearerParams(t *testing.T, resp *http.Response) map[string]string {
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
	t.Fatalf("no Bearer challenge: %q", resp.Header.Values("WWW-Authenticate"))
	return nil
}

// runPing connects the go-sdk client with the token in the Authorization
// header and runs a program calling ping; it returns the result.
func runPing(t *testing.T, url, tok string) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{tok}}}, nil)
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
	is := newJWTIssuer(t, "rsa1", "ec1")
	other := newJWTIssuer(t) // same kids, other keys
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("policy.yaml", `version: 1
rules:
  - name: alice-ping
    tools: [ping]
    when: 'principal.id == "jwt:alice"'
    message: only alice may ping
`)
	cfg := write("sandcall.yaml", `version: 1
policy: policy.yaml
auth:
  tokens:
    - sha256: `+hashOf(t, "static-secret-token")+`
      principal: alice
  scopes_supported: mcp          # one string or a list
  jwt:
    jwks_url: `+is.url+`
    issuer: `+is.url+`
    refresh_interval: 1h
`)
	url, _ := startHTTP(t, "--demo", "--isolation", "inprocess", "--config", cfg)
	base := strings.TrimSuffix(url, "/mcp")

	if got := runPing(t, url, is.token(t, "rsa1", "", is.claims("alice", url))); got != float64(2) {
		t.Errorf("alice (RS256): %v", got)
	}
	if got := runPing(t, url, is.token(t, "ec1", "", is.claims("alice", url))); got != float64(2) {
		t.Errorf("alice (ES256): %v", got)
	}
	if got := runPing(t, url, is.token(t, "ec1", "", is.claims("bob", url))); got != "E_TOOL_DENIED" {
		t.Errorf("bob: %v", got)
	}
	// The static token's principal "alice" is not "jwt:alice".
	if got := runPing(t, url, "static-secret-token"); got != "E_TOOL_DENIED" {
		t.Errorf("static alice: %v", got)
	}
	if n := is.fetches.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times for 4 sessions, want 1", n)
	}

	payload, _ := json.Marshal(is.claims("alice", url))
	b64 := base64.RawURLEncoding.EncodeToString
	hour := time.Hour.Seconds()
	for _, c := range []struct{ name, tok, desc string }{
		{"expired", is.token(t, "rsa1", "", is.claims("alice", url, "exp", time.Now().Unix()-int64(hour), "iat", time.Now().Unix()-2*int64(hour))), "expired"},
		{"wrong issuer", is.token(t, "rsa1", "", is.claims("alice", url, "iss", "https://evil.example")), "issuer"},
		{"wrong audience", is.token(t, "rsa1", "", is.claims("alice", "https://other.example/mcp")), "audience"},
		{"wrong key", other.token(t, "rsa1", "", is.claims("alice", url)), "signature"},
		{"alg none", b64([]byte(`{"alg":"none","typ":"JWT","kid":"rsa1"}`)) + "." + b64(payload) + ".", "algorithm"},
		{"unknown kid", is.token(t, "ed1", "", is.claims("alice", url)), "kid"},
	} {
		resp, body := postStatus(t, url, c.tok)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
			continue
		}
		p := bearerParams(t, resp)
		if p["error"] != "invalid_token" || !strings.Contains(p["error_description"], c.desc) || p["resource_metadata"] != base+"/.well-known/oauth-protected-resource/mcp" {
			t.Errorf("%s: challenge %v", c.name, p)
		}
	}
	for i := range 10 {
		resp, _ := postStatus(t, url, is.token(t, "ed1", "forged"+string(rune('0'+i)), is.claims("alice", url)))
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("forged kid %d: %d", i, resp.StatusCode)
		}
	}
	if n := is.fetches.Load(); n != 2 {
		t.Errorf("JWKS fetches after 11 unknown kids: %d, want 2 (one refresh, then rate-limited)", n)
	}

	// Discovery as a client does it, with the go-sdk's helpers: parse the
	// 401's challenge, fetch the metadata it names, check the resource.
	resp, _ := postStatus(t, url, "")
	p := bearerParams(t, resp)
	if resp.StatusCode != 401 || p["error"] != "" {
		t.Errorf("no token: %d %v", resp.StatusCode, p)
	}
	prm, err := oauthex.GetProtectedResourceMetadata(context.Background(), p["resource_metadata"], url, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	if prm.Resource != url || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != is.url ||
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
	is := newJWTIssuer(t, "ed1")
	is.down.Store(true)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sandcall.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\nauth:\n  jwt:\n    jwks_url: "+is.url+"\n    issuer: "+is.url+"\n    refresh_interval: 1ns\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _ := startHTTP(t, "--demo", "--isolation", "inprocess", "--config", cfg,
		"--auth-jwks-url", is.url, "--auth-issuer", is.url, "--public-url", "http://sandcall.test:8080", "--auth-audience", "sandcall-tests")
	tok := is.token(t, "ed1", "", is.claims("alice", "sandcall-tests"))
	resp, body := postStatus(t, url, tok)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "signing keys") {
		t.Errorf("JWKS down: %d Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if strings.Contains(body, is.url) {
		t.Errorf("the 503 names the JWKS URL: %s", body)
	}
	resp, _ = postStatus(t, url, "")
	if p := bearerParams(t, resp); resp.StatusCode != 401 || p["resource_metadata"] != "http://sandcall.test:8080/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("no token while the JWKS is down: %d %v", resp.StatusCode, p)
	}
	is.down.Store(false)
	if got := runPing(t, url, tok); got != float64(2) {
		t.Errorf("after the JWKS came back: %v", got)
	}
	// The public URL's audience is not accepted when an audience is set.
	resp, _ = postStatus(t, url, is.token(t, "ed1", "", is.claims("alice", "http://sandcall.test:8080/mcp")))
	if p := bearerParams(t, resp); resp.StatusCode != 401 || !strings.Contains(p["error_description"], "audience") {
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
	is := newJWTIssuer(t, "ec1")
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
	url, _ := startHTTP(t, "--demo", "--isolation", "inprocess", "--config", cfg, "--auth-jwks-url", is.url, "--auth-issuer", is.url)
	base := strings.TrimSuffix(url, "/mcp")
	good := is.token(t, "ec1", "", is.claims("alice", url))
	bad := is.token(t, "ec1", "", is.claims("alice", "https://other.example/mcp"))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, client, url, good, bad)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("ts client: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
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
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("ts client output %q: %v (stderr %s)", stdout.String(), err, stderr.String())
	}
	if got.Anon.Status != 401 || got.Anon.ResourceMetadataURL != base+"/.well-known/oauth-protected-resource/mcp" || got.Anon.Error != nil {
		t.Errorf("no token: %+v", got.Anon)
	}
	if got.Hinted.Resource != url || len(got.Hinted.AuthorizationServers) != 1 || got.Hinted.AuthorizationServers[0] != is.url {
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
