package bearer

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// TestParseJWKS: keys a resource server must not use are skipped, as RFC
// 7517 §5 asks, not fatal: a symmetric key, an encryption key, an unknown
// key type, an EC point off its curve; a published private key is used
// for its public half only. A set with no usable key is an error.
func TestParseJWKS(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	good, _ := json.Marshal(jose.JSONWebKey{Key: pub, KeyID: "good", Algorithm: "EdDSA", Use: "sig"})
	leaked, _ := json.Marshal(jose.JSONWebKey{Key: priv, KeyID: "leaked", Algorithm: "EdDSA"})
	b64 := base64.RawURLEncoding.EncodeToString
	offCurve := `{"kty":"EC","crv":"P-256","kid":"off","x":"` + b64(make([]byte, 32)) + `","y":"` + b64(append(make([]byte, 31), 1)) + `"}`
	set := `{"keys":[
		{"kty":"oct","kid":"hmac","k":"` + b64([]byte("0123456789abcdef0123456789abcdef")) + `"},
		{"kty":"OKP","crv":"Ed25519","kid":"enc","use":"enc","x":"` + b64(pub) + `"},
		{"kty":"foo","kid":"foo"},
		` + offCurve + `,
		` + string(leaked) + `,
		` + string(good) + `]}`
	keys, err := parseJWKS([]byte(set))
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range keys {
		kids = append(kids, k.KeyID)
		if !k.IsPublic() {
			t.Errorf("key %s kept its private half", k.KeyID)
		}
	}
	if strings.Join(kids, ",") != "leaked,good" {
		t.Errorf("kept %v, want [leaked good]", kids)
	}
	for _, bad := range []string{`{"keys":[{"kty":"oct","k":"AAAA"}]}`, `{"keys":[]}`, `not json`, `{"keys":{}}`} {
		if _, err := parseJWKS([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
