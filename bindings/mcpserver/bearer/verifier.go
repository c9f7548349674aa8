package bearer

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/sandcall/sandcall/policy"
)

// Token is one bearer token the HTTP server accepts, stored hashed: the
// lower-case hex SHA-256 of the token, and the principal it acts for.
// `sandcall token hash` computes the hash.
type Token struct {
	SHA256    string
	Principal policy.Principal
}

// HashToken returns the lower-case hex SHA-256 of a bearer token.
func HashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// Verifier checks bearer tokens against their hashes and, once AcceptJWT
// is called, as JWTs. The zero Verifier accepts no token.
type Verifier struct {
	hashes [][sha256.Size]byte
	who    []policy.Principal
	// jwt checks a token that is no static one but has a JWT's shape;
	// nil: static tokens only.
	jwt       *jwtVerifier
	audiences func() []string
	// metadata is the URL of the protected resource metadata a 401 names.
	metadata func(r *http.Request) string
	scopes   []string // required of JWTs
	leeway   time.Duration
}

// New returns a Verifier of the static tokens ts: each hash 64 hex
// digits, each with a principal, none listed twice.
func New(ts []Token) (*Verifier, error) {
	v := &Verifier{}
	seen := map[string]bool{}
	for i, t := range ts {
		h := strings.ToLower(strings.TrimSpace(t.SHA256))
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("mcpserver: token %d: sha256 must be 64 hex digits (see 'sandcall token hash')", i+1)
		}
		if t.Principal.ID == "" {
			return nil, fmt.Errorf("mcpserver: token %d: no principal id", i+1)
		}
		if seen[h] {
			return nil, fmt.Errorf("mcpserver: token %d: the same token is listed twice", i+1)
		}
		seen[h] = true
		v.hashes = append(v.hashes, [sha256.Size]byte(b))
		v.who = append(v.who, t.Principal)
	}
	return v, nil
}

// Principals returns the principals of the static tokens.
func (v *Verifier) Principals() []policy.Principal { return slices.Clone(v.who) }

// SetMetadata sets how a refusal names the protected resource metadata
// (RFC 9728) of the request's resource.
func (v *Verifier) SetMetadata(url func(r *http.Request) string) { v.metadata = url }

// AcceptJWT makes v accept JWT bearer tokens configured by c beside its
// static tokens, each acting for JWTPrincipalPrefix + its principal claim.
// audiences returns the "aud" values accepted when c.Audience is empty
// (the resource's URLs, known once the server listens). No static
// token's principal may start with JWTPrincipalPrefix.
func (v *Verifier) AcceptJWT(c *JWTConfig, log *slog.Logger, audiences func() []string) error {
	j, err := newJWTVerifier(c, log)
	if err != nil {
		return err
	}
	for _, p := range v.who {
		if strings.HasPrefix(p.ID, JWTPrincipalPrefix) {
			return fmt.Errorf("mcpserver: static token principal %q starts with %q, which names JWT principals; rename it", p.ID, JWTPrincipalPrefix)
		}
	}
	v.jwt, v.audiences = j, audiences
	v.scopes, v.leeway = j.scopes, j.leeway
	return nil
}

// AcceptsJWT reports whether AcceptJWT was called.
func (v *Verifier) AcceptsJWT() bool { return v.jwt != nil }

// JWTAudience returns the configured JWT audiences (JWTConfig.Audience):
// empty when they derive from the resource's URL, or JWTs are not
// accepted.
func (v *Verifier) JWTAudience() []string {
	if v.jwt == nil {
		return nil
	}
	return v.jwt.audience
}

// JWTIssuer returns the issuer of accepted JWTs; "" when none are.
func (v *Verifier) JWTIssuer() string {
	if v.jwt == nil {
		return ""
	}
	return v.jwt.issuer
}

// principalKey is the key of the principal in auth.TokenInfo.Extra.
const principalKey = "sandcall.principal"

// PrincipalOf returns the principal a verified token acts for.
func PrincipalOf(ti *auth.TokenInfo) (policy.Principal, bool) {
	if ti == nil {
		return policy.Principal{}, false
	}
	p, ok := ti.Extra[principalKey].(policy.Principal)
	return p, ok
}

// Verify is an auth.TokenVerifier: it hashes the presented token and
// compares it with every configured hash in constant time; a token that is
// none of them but has a JWT's shape is checked as a JWT.
func (v *Verifier) Verify(ctx context.Context, tok string, r *http.Request) (ti *auth.TokenInfo, err error) {
	defer func() {
		if oc, ok := r.Context().Value(outcomeKey{}).(*authOutcome); ok {
			oc.err = err
		}
	}()
	h := sha256.Sum256([]byte(tok))
	found := -1
	for i := range v.hashes {
		if subtle.ConstantTimeCompare(h[:], v.hashes[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 && v.jwt != nil && looksLikeJWT(tok) {
		var aud []string
		if v.audiences != nil {
			aud = v.audiences()
		}
		return v.jwt.verify(ctx, tok, aud)
	}
	if found < 0 {
		return nil, invalidToken("unknown bearer token")
	}
	p := v.who[found]
	// UserID binds each session to its principal: the SDK refuses a
	// session ID presented with another principal's token.
	// A static token is the operator's own: it holds every scope required
	// of JWTs.
	return &auth.TokenInfo{UserID: p.ID, Scopes: v.scopes, Extra: map[string]any{principalKey: p}}, nil
}

// Require wraps next with go-sdk's bearer-token middleware (which also
// refuses, 403, a token without the required scopes), adding the
// WWW-Authenticate challenge RFC 6750 and RFC 9728 ask for on a 401 or 403
// (see challenge), and answering 503 with Retry-After when a JWT could
// not be checked because the issuer's keys could not be fetched.
func (v *Verifier) Require(next http.Handler) http.Handler {
	mw := auth.RequireBearerToken(v.Verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true,
		Scopes: v.scopes, ClockSkew: v.leeway})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		oc := &authOutcome{}
		r = r.WithContext(context.WithValue(r.Context(), outcomeKey{}, oc))
		// The challenge goes on the failure path only: the inner handler
		// gets the original writer, so SSE streaming is untouched.
		inner := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { next.ServeHTTP(w, r) })
		mw(inner).ServeHTTP(&challengeWriter{ResponseWriter: w, v: v, r: r, oc: oc}, r)
	})
}

// challengeWriter rewrites the failure answers of the SDK's middleware.
type challengeWriter struct {
	http.ResponseWriter
	v  *Verifier
	r  *http.Request
	oc *authOutcome
}

func (c *challengeWriter) WriteHeader(code int) {
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		md := ""
		if c.v.metadata != nil {
			md = c.v.metadata(c.r)
		}
		c.Header().Set("WWW-Authenticate", challenge(md, c.v.scopes, code,
			c.r.Header.Get("Authorization") != "", c.oc.err))
	case code == http.StatusInternalServerError && errors.Is(c.oc.err, errKeysUnavailable):
		c.Header().Set("Retry-After", "5")
		code = http.StatusServiceUnavailable
	}
	c.ResponseWriter.WriteHeader(code)
}

// authOutcome carries, from the token verifier to the challenge, why a
// token was refused.
type authOutcome struct{ err error }

type outcomeKey struct{}

// challenge is the WWW-Authenticate value of a refused request (RFC 6750
// §3, RFC 9728 §5.1): the realm, where the protected resource metadata
// is, the scopes required, and for a refused token the error code and a
// description. Descriptions are fixed texts, never a value taken from the
// token.
func challenge(metadata string, scopes []string, code int, hadToken bool, err error) string {
	params := []string{`realm="sandcall"`, fmt.Sprintf("resource_metadata=%q", metadata)}
	if len(scopes) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(scopes, " ")))
	}
	var te *tokenError
	switch {
	case code == http.StatusForbidden:
		params = append(params, `error="insufficient_scope"`,
			`error_description="the token lacks a scope this server requires"`)
	case errors.As(err, &te):
		// RFC 6750 §3: no '"' nor '\\' in a description.
		desc := strings.Map(func(r rune) rune {
			if r == '"' || r == '\\' || r < 0x20 || r > 0x7e {
				return '\''
			}
			return r
		}, te.desc)
		params = append(params, `error="`+te.code+`"`, `error_description="`+desc+`"`)
	case hadToken:
		params = append(params, `error="invalid_token"`, `error_description="the bearer token was not accepted"`)
	}
	return "Bearer " + strings.Join(params, ", ")
}
