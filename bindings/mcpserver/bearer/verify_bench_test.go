package bearer

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/sandcall/sandcall/policy"
)

// BenchmarkTokenVerify measures what authentication costs one request:
// a static token (a SHA-256 and constant-time compares) against a JWT
// per signature algorithm, keys already cached (no JWKS fetch).
func BenchmarkTokenVerify(b *testing.B) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, dk, _ := ed25519.GenerateKey(rand.Reader)
	keys := []struct {
		kid string
		alg jose.SignatureAlgorithm
		key crypto.Signer
	}{{"rsa", jose.RS256, rk}, {"ec", jose.ES256, ek}, {"ed", jose.EdDSA, dk}}
	v, err := newJWTVerifier(&JWTConfig{JWKSURL: "https://idp.example/jwks", Issuer: "https://idp.example"}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range keys {
		v.keys.keys = append(v.keys.keys, jose.JSONWebKey{Key: k.key.Public(), KeyID: k.kid, Algorithm: string(k.alg)})
	}
	v.keys.fetchedAt, v.keys.triedAt = time.Now(), time.Now()
	ts, err := New([]Token{{SHA256: HashToken("static"), Principal: policy.Principal{ID: "local"}}})
	if err != nil {
		b.Fatal(err)
	}
	aud := []string{"https://sandcall.example/mcp"}
	ctx := context.Background()
	b.Run("static", func(b *testing.B) {
		r := httptestRequest()
		for b.Loop() {
			if _, err := ts.Verify(ctx, "static", r); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, k := range keys {
		s, _ := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.key, KeyID: k.kid}}, nil)
		tok, _ := jwt.Signed(s).Claims(map[string]any{"iss": "https://idp.example", "sub": "alice", "aud": aud[0],
			"exp": time.Now().Add(time.Hour).Unix()}).Serialize()
		b.Run(string(k.alg), func(b *testing.B) {
			for b.Loop() {
				if _, err := v.verify(ctx, tok, aud); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func httptestRequest() *http.Request { return httptest.NewRequest("POST", "/mcp", nil) }
