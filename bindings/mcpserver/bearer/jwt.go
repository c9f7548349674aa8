package bearer

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/sandcall/sandcall/policy"
)

// JWTPrincipalPrefix starts the ID of every principal a JWT acts for:
// "jwt:" + the token's principal claim ("sub" by default). Static token
// principals may not start with it when JWTs are accepted, so a JWT
// subject can never take a static token's identity (nor the reverse).
const JWTPrincipalPrefix = "jwt:"

// JWTConfig configures JWT bearer tokens (RFC 9068 style access tokens):
// signed by an authorization server whose public keys are published at
// JWKSURL, checked for signature, issuer, audience and validity period.
// Static tokens (New) keep working beside them.
type JWTConfig struct {
	// JWKSURL is the issuer's JSON Web Key Set. Required. HTTPS, or HTTP
	// on a loopback address; any HTTP only with AllowHTTP.
	JWKSURL string
	// Issuer is the exact "iss" every token must carry. Required.
	Issuer string
	// Audience lists the "aud" values accepted (a token must name at least
	// one; a trailing "/" is ignored, oauthex.MatchesResource). If empty,
	// the audiences given to Verifier.AcceptJWT: for the MCP server, the
	// resource's own URL (its public URL + "/mcp", and the public URL
	// itself, the resource of the root metadata).
	Audience []string
	// PrincipalClaim names the claim whose string value, after
	// JWTPrincipalPrefix, is the principal's ID. If empty, "sub".
	PrincipalClaim string
	// RolesClaim, if set, names a claim (a string or an array of strings)
	// whose values are the principal's roles (policy: principal.roles).
	RolesClaim string
	// Scopes, if set, must all be granted by the token ("scope", space
	// separated, or "scp"); a token without them gets 403
	// insufficient_scope.
	Scopes []string
	// Leeway is the clock skew tolerated on exp, nbf and iat. If zero,
	// 30s; at most 5m.
	Leeway time.Duration
	// Algorithms are the accepted "alg" values. If empty: RS256, RS384,
	// RS512, PS256, PS384, PS512, ES256, ES384, ES512 and EdDSA. "none"
	// and the HMAC algorithms (HS*) are refused: a public key set cannot
	// vouch for a shared secret.
	Algorithms []string
	// AllowHTTP allows a JWKSURL over plain HTTP on a non-loopback host.
	AllowHTTP bool
	// RefreshInterval is the least time between two fetches of the key
	// set (a token with an unknown kid triggers one). If zero, 30s.
	RefreshInterval time.Duration
	// MaxKeyAge is how old the key set may grow before a token triggers a
	// refresh (served meanwhile from the known keys). If zero, 1h.
	MaxKeyAge time.Duration
	// HTTPClient fetches the key set. If nil, a client with a 10s timeout.
	HTTPClient *http.Client
}

// defaultJWTAlgorithms are the asymmetric JWS algorithms accepted when
// JWTConfig.Algorithms is empty.
var defaultJWTAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512, jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// jwtVerifier checks JWT bearer tokens.
type jwtVerifier struct {
	issuer   string
	audience []string // empty: derived from the public URL
	claim    string
	roles    string
	scopes   []string
	leeway   time.Duration
	algs     []jose.SignatureAlgorithm
	keys     *jwksCache
}

func newJWTVerifier(c *JWTConfig, log *slog.Logger) (*jwtVerifier, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("mcpserver: JWT: "+format, a...)
	}
	if c.JWKSURL == "" {
		return nil, bad("the JWKS URL (where the issuer publishes its public keys) is required")
	}
	if c.Issuer == "" {
		return nil, bad("the issuer (the exact iss claim tokens carry) is required with a JWKS URL")
	}
	u, err := url.Parse(c.JWKSURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, bad("JWKS URL %q: want an https:// URL", c.JWKSURL)
	}
	if u.Scheme == "http" && !c.AllowHTTP && !loopbackHost(u.Hostname()) {
		return nil, bad("JWKS URL %q: plain HTTP lets anyone on the path substitute the keys; use https:// (or allow HTTP explicitly)", c.JWKSURL)
	}
	for i, a := range c.Audience {
		if strings.TrimSpace(a) == "" {
			return nil, bad("audience %d is empty", i+1)
		}
	}
	v := &jwtVerifier{issuer: c.Issuer, audience: slices.Clone(c.Audience), claim: c.PrincipalClaim,
		roles: c.RolesClaim, scopes: slices.Clone(c.Scopes), leeway: c.Leeway}
	if v.claim == "" {
		v.claim = "sub"
	}
	switch {
	case v.leeway == 0:
		v.leeway = 30 * time.Second
	case v.leeway < 0 || v.leeway > 5*time.Minute:
		return nil, bad("leeway %s: want between 0 and 5m", c.Leeway)
	}
	if len(c.Algorithms) == 0 {
		v.algs = defaultJWTAlgorithms
	}
	for _, a := range c.Algorithms {
		alg := jose.SignatureAlgorithm(a)
		switch {
		case strings.EqualFold(a, "none"):
			return nil, bad(`algorithm "none" means unsigned tokens; it is never accepted`)
		case strings.HasPrefix(strings.ToUpper(a), "HS"):
			return nil, bad("algorithm %q is HMAC (a shared secret); a JWKS holds public keys, so only asymmetric algorithms are accepted", a)
		case !slices.Contains(defaultJWTAlgorithms, alg):
			return nil, bad("algorithm %q: want one of %v", a, defaultJWTAlgorithms)
		}
		v.algs = append(v.algs, alg)
	}
	cl := c.HTTPClient
	if cl == nil {
		cl = &http.Client{Timeout: 10 * time.Second, CheckRedirect: noDowngrade}
	}
	v.keys = &jwksCache{url: c.JWKSURL, client: cl, minInterval: c.RefreshInterval, maxAge: c.MaxKeyAge,
		log: log, now: time.Now}
	if v.keys.minInterval <= 0 {
		v.keys.minInterval = 30 * time.Second
	}
	if v.keys.maxAge <= 0 {
		v.keys.maxAge = time.Hour
	}
	return v, nil
}

// noDowngrade follows at most 5 redirects, never from https to http.
func noDowngrade(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("too many redirects")
	}
	if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return errors.New("redirect from https to " + req.URL.Scheme + " refused")
	}
	return nil
}

// loopbackHost reports whether host names this machine only.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// looksLikeJWT reports whether tok has the shape of a JWS compact
// serialization (three base64url parts).
func looksLikeJWT(tok string) bool {
	return strings.Count(tok, ".") == 2 && len(tok) < 16<<10
}

// tokenError is a rejected token: the RFC 6750 error code and a fixed
// description (never the token, never a value taken from it).
type tokenError struct {
	code string // invalid_token
	desc string
}

func (e *tokenError) Error() string { return e.desc }
func (e *tokenError) Unwrap() error { return auth.ErrInvalidToken }

func invalidToken(desc string) error { return &tokenError{code: "invalid_token", desc: desc} }

// verify checks a JWT and returns the TokenInfo of its principal.
// audience is the accepted audiences (the configured ones or the
// resource's URLs).
func (v *jwtVerifier) verify(ctx context.Context, tok string, audience []string) (*auth.TokenInfo, error) {
	t, err := jwt.ParseSigned(tok, v.algs)
	if err != nil {
		if _, ok := errors.AsType[*jose.ErrUnexpectedSignatureAlgorithm](err); ok {
			return nil, invalidToken("the token's signing algorithm is not accepted (asymmetric algorithms only; never none or HS*)")
		}
		return nil, invalidToken("the token is not a well-formed signed JWT")
	}
	if len(t.Headers) != 1 {
		return nil, invalidToken("the token is not a well-formed signed JWT")
	}
	h := t.Headers[0]
	keys, err := v.keys.lookup(ctx, h.KeyID)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, invalidToken("the token's key id (kid) is not in the issuer's key set")
	}
	var (
		std   jwt.Claims
		extra map[string]any
		ok    bool
	)
	// Only keys of the token's algorithm's type are tried, and at most
	// maxKeyTries of them: a token without kid (or a set with duplicate
	// kids) cannot make the server try every key of a large set.
	tries := 0
	for _, k := range keys {
		if (k.Algorithm != "" && k.Algorithm != h.Algorithm) || !keyFits(k.Key, h.Algorithm) {
			continue
		}
		if tries++; tries > maxKeyTries {
			break
		}
		if err := t.Claims(k.Key, &std, &extra); err == nil {
			ok = true
			break
		}
	}
	if !ok {
		return nil, invalidToken("the token's signature does not verify with the issuer's keys")
	}
	if std.Expiry == nil {
		return nil, invalidToken("the token has no expiry (exp)")
	}
	err = std.ValidateWithLeeway(jwt.Expected{Issuer: v.issuer}, v.leeway)
	switch {
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return nil, invalidToken("the token's issuer (iss) is not the one this server trusts")
	case errors.Is(err, jwt.ErrExpired):
		return nil, invalidToken("the token has expired")
	case errors.Is(err, jwt.ErrNotValidYet):
		return nil, invalidToken("the token is not valid yet (nbf)")
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, invalidToken("the token is issued in the future (iat)")
	case err != nil:
		return nil, invalidToken("the token's claims are not valid")
	}
	if len(audience) == 0 {
		return nil, invalidToken("this server has no public URL configured, so no token audience can match")
	}
	if !slices.ContainsFunc(audience, func(a string) bool { return oauthex.MatchesResource(std.Audience, a) }) {
		return nil, invalidToken("the token's audience (aud) is not this resource")
	}
	id, _ := extra[v.claim].(string)
	if id == "" || len(id) > 256 || strings.ContainsFunc(id, unicode.IsControl) {
		return nil, invalidToken("the token has no usable " + v.claim + " claim (a non-empty string) to name its principal")
	}
	p := policy.Principal{ID: JWTPrincipalPrefix + id}
	if v.roles != "" {
		p.Roles = stringList(extra[v.roles])
	}
	var scopes []string
	if s, ok := extra["scope"].(string); ok {
		scopes = strings.Fields(s)
	} else {
		scopes = stringList(extra["scp"])
	}
	return &auth.TokenInfo{UserID: p.ID, Scopes: scopes, Expiration: std.Expiry.Time(),
		Extra: map[string]any{principalKey: p}}, nil
}

// maxKeyTries bounds the signature checks one token may cost.
const maxKeyTries = 4

// keyFits reports whether key is of the type algorithm alg verifies with.
func keyFits(key any, alg string) bool {
	switch key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		return strings.HasPrefix(alg, "ES")
	case ed25519.PublicKey:
		return alg == string(jose.EdDSA)
	}
	return false
}

// stringList reads a claim that is a string (space separated) or an
// array of strings; anything else is no values.
func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		return strings.Fields(x)
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
