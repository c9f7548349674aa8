package mcpserver_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// Accept JWT bearer tokens from an authorization server (here a stand-in
// publishing one Ed25519 key as its JWKS): a token for this resource is
// accepted and acts for "jwt:<sub>"; one for another resource gets 401
// with an RFC 6750 challenge naming the protected resource metadata.
func ExampleHostedAuth() {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: pub, KeyID: "k1", Algorithm: "EdDSA", Use: "sig"}}})
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(jwks) }))
	defer idp.Close()

	cat, _ := tools.NewCatalog()
	broker, _ := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	runner, _ := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{})})
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Hosted: mcpserver.HostedAuth{
		JWT: &bearer.JWTConfig{JWKSURL: idp.URL, Issuer: idp.URL},
	}})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(srv.HTTPHandler())
	defer ts.Close()
	_ = srv.SetPublicURL(ts.URL) // known once listening; else HostedAuth.PublicURL

	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: priv, KeyID: "k1"}}, nil)
	token := func(aud string) string {
		tok, _ := jwt.Signed(signer).Claims(map[string]any{"iss": idp.URL, "sub": "alice", "aud": aud,
			"exp": time.Now().Add(time.Hour).Unix()}).Serialize()
		return tok
	}
	ping := func(tok string) *http.Response {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, _ := http.DefaultClient.Do(req)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	fmt.Println("this resource:", ping(token(ts.URL+"/mcp")).StatusCode)
	resp := ping(token("https://other.example/mcp"))
	fmt.Println("another resource:", resp.StatusCode)
	fmt.Println(strings.ReplaceAll(resp.Header.Get("WWW-Authenticate"), ts.URL, "http://sandcall.test"))
	// Output:
	// this resource: 200
	// another resource: 401
	// Bearer realm="sandcall", resource_metadata="http://sandcall.test/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="the token's audience (aud) is not this resource"
}
