package jwttest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/sandcall/sandcall/bindings/mcpserver/jwttest"
)

func fetch(t *testing.T, url string) (int, jose.JSONWebKeySet) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set jose.JSONWebKeySet
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, set
}

// TestIssuer: a token of each key verifies, with go-jose, against the
// published JWKS and carries the claims; only published keys are served;
// Down answers 502, Hang holds the fetch until it is cancelled; every
// fetch counts.
func TestIssuer(t *testing.T) {
	is := jwttest.NewIssuer(t, "rsa1", "ec1")
	code, set := fetch(t, is.URL)
	if code != 200 || len(set.Keys) != 2 || len(set.Key("ed1")) != 0 {
		t.Fatalf("JWKS %d %+v, want rsa1 and ec1", code, set)
	}
	is.Publish(jwttest.Kids...)
	_, set = fetch(t, is.URL)
	for _, kid := range jwttest.Kids {
		tok, err := jwt.ParseSigned(is.Sign(t, kid, "", is.Claims("alice", "aud1", "scope", "x", "nbf", nil)),
			[]jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA})
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Headers[0].KeyID; got != kid {
			t.Errorf("%s: header kid %q", kid, got)
		}
		var c map[string]any
		if err := tok.Claims(set.Key(kid)[0].Key, &c); err != nil {
			t.Fatalf("%s: %v", kid, err)
		}
		if c["iss"] != is.URL || c["sub"] != "alice" || c["aud"] != "aud1" || c["scope"] != "x" || c["nbf"] != nil || c["exp"] == nil {
			t.Errorf("%s: claims %v", kid, c)
		}
	}
	if tok := is.Sign(t, "ec1", "forged", is.Claims("a", "b")); tok == "" {
		t.Fatal("no token")
	} else if p, _ := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256}); p.Headers[0].KeyID != "forged" {
		t.Errorf("header kid %q, want forged", p.Headers[0].KeyID)
	}
	is.Down.Store(true)
	if code, _ := fetch(t, is.URL); code != http.StatusBadGateway {
		t.Errorf("down: %d", code)
	}
	is.Down.Store(false)
	is.Hang.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, is.URL, nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-is.Arrived
	cancel()
	if err := <-errc; err == nil {
		t.Error("a hung fetch answered")
	}
	if n := is.Fetches.Load(); n != 4 {
		t.Errorf("fetches %d, want 4", n)
	}
}

// TestWith: With copies, sets and deletes; the original is unchanged.
func TestWith(t *testing.T) {
	m := map[string]any{"a": 1, "b": 2}
	c := jwttest.With(m, "a", nil, "c", 3)
	if len(m) != 2 || len(c) != 2 || c["b"] != 2 || c["c"] != 3 {
		t.Errorf("With: %v from %v", c, m)
	}
}
