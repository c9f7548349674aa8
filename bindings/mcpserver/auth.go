package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/tools"
)

// Token is one bearer token the HTTP server accepts, stored hashed: the
// lower-case hex SHA-256 of the token, and the principal it acts for.
// `sandcall token hash` computes the hash.
type Token struct {
	SHA256    string
	Principal bindings.Principal
}

// HashToken returns the lower-case hex SHA-256 of a bearer token.
func HashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// tokenSet verifies bearer tokens against their hashes and, with
// Config.Hosted.JWT, as JWTs (hosted.go, jwt.go).
type tokenSet struct {
	hashes [][sha256.Size]byte
	who    []bindings.Principal
	// jwt checks a token that is no static one but has a JWT's shape;
	// nil: static tokens only.
	jwt func(ctx context.Context, tok string) (*auth.TokenInfo, error)
	// metadata is the URL of the protected resource metadata a 401 names.
	metadata func(r *http.Request) string
	scopes   []string // required of JWTs
	leeway   time.Duration
}

func newTokenSet(ts []Token) (*tokenSet, error) {
	s := &tokenSet{}
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
		s.hashes = append(s.hashes, [sha256.Size]byte(b))
		s.who = append(s.who, t.Principal)
	}
	return s, nil
}

const principalKey = "sandcall.principal"

// verify is an auth.TokenVerifier: it hashes the presented token and
// compares it with every configured hash in constant time.
func (s *tokenSet) verify(ctx context.Context, tok string, r *http.Request) (ti *auth.TokenInfo, err error) {
	defer func() {
		if oc, ok := r.Context().Value(outcomeKey{}).(*authOutcome); ok {
			oc.err = err
		}
	}()
	h := sha256.Sum256([]byte(tok))
	found := -1
	for i := range s.hashes {
		if subtle.ConstantTimeCompare(h[:], s.hashes[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 && s.jwt != nil && looksLikeJWT(tok) {
		return s.jwt(ctx, tok)
	}
	if found < 0 {
		return nil, invalidToken("unknown bearer token")
	}
	p := s.who[found]
	// UserID binds each session to its principal: the SDK refuses a
	// session ID presented with another principal's token.
	// A static token is the operator's own: it holds every scope required
	// of JWTs.
	return &auth.TokenInfo{UserID: p.ID, Scopes: s.scopes, Extra: map[string]any{principalKey: p}}, nil
}

// requireToken wraps next with go-sdk's bearer-token middleware (which
// also refuses, 403, a token without the required scopes), adding the
// WWW-Authenticate challenge RFC 6750 and RFC 9728 ask for on a 401 or 403
// (see challenge), and answering 503 with Retry-After when a JWT could
// not be checked because the issuer's keys could not be fetched.
func (s *tokenSet) requireToken(next http.Handler) http.Handler {
	mw := auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true,
		Scopes: s.scopes, ClockSkew: s.leeway})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		oc := &authOutcome{}
		r = r.WithContext(context.WithValue(r.Context(), outcomeKey{}, oc))
		// The challenge goes on the failure path only: the inner handler
		// gets the original writer, so SSE streaming is untouched.
		inner := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { next.ServeHTTP(w, r) })
		mw(inner).ServeHTTP(&challengeWriter{ResponseWriter: w, set: s, r: r, oc: oc}, r)
	})
}

// challengeWriter rewrites the failure answers of the SDK's middleware.
type challengeWriter struct {
	http.ResponseWriter
	set *tokenSet
	r   *http.Request
	oc  *authOutcome
}

func (c *challengeWriter) WriteHeader(code int) {
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		c.Header().Set("WWW-Authenticate", challenge(c.set.metadata(c.r), c.set.scopes, code,
			c.r.Header.Get("Authorization") != "", c.oc.err))
	case code == http.StatusInternalServerError && errors.Is(c.oc.err, errKeysUnavailable):
		c.Header().Set("Retry-After", "5")
		code = http.StatusServiceUnavailable
	}
	c.ResponseWriter.WriteHeader(code)
}

// principalFor returns the principal a request acts for: the bearer
// token's over authenticated HTTP, otherwise the configured principal. A
// client never names its principal.
func (s *Server) principalFor(req mcp.Request) bindings.Principal {
	if req != nil {
		if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
			if p, ok := ex.TokenInfo.Extra[principalKey].(bindings.Principal); ok {
				return p
			}
		}
	}
	return s.principal
}

// filterToolsList is receiving middleware: tools/list shows only the tools
// exposed to the request's principal (the server registers the union over
// all configured principals), with run_code's description and hints
// written for that principal's bindings (the registered ones are the
// default principal's), and never a deprecated alias (served so that calls
// by the old name still work, but not listed).
func (s *Server) filterToolsList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		lr, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return res, err
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		s.mu.Lock()
		hidden := s.hidden
		listed := map[string]bool{}
		for _, t := range lr.Tools {
			listed[t.Name] = s.listedTo(ss, t.Name)
		}
		nDeferred := len(s.deferred)
		s.mu.Unlock()
		var ok2 map[string]bool // nil: every tool not hidden
		p := s.principalFor(req)
		if s.tokens != nil {
			ok2 = map[string]bool{RunCodeName: true, ReadOutputName: true}
			for _, t := range s.broker.Exposed(tools.Direct, p) {
				ok2[t.Name] = true
			}
		} else if len(hidden) == 0 && nDeferred == 0 {
			return res, err
		}
		c := *lr
		c.Tools = nil
		for _, t := range lr.Tools {
			if hidden[t.Name] || !listed[t.Name] || (ok2 != nil && !ok2[t.Name]) {
				continue
			}
			if t.Name == RunCodeName && s.tokens != nil {
				rc := *t // the SDK's own copy stays as registered
				rc.Description, rc.Annotations = s.runCodeDescription(p), s.runCodeAnnotations(p)
				t = &rc
			}
			c.Tools = append(c.Tools, t)
		}
		return &c, nil
	}
}

// sessionApprover asks the person behind an MCP session through
// elicitation.
type sessionApprover struct{ ss *mcp.ServerSession }

var _ bindings.Approver = sessionApprover{}

func (a sessionApprover) Approve(ctx context.Context, req bindings.ApprovalRequest) (bool, error) {
	if a.ss == nil {
		return false, bindings.ErrApprovalUnsupported
	}
	ip := a.ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false, bindings.ErrApprovalUnsupported
	}
	// From protocol 2026-07-28 on, a server may not send requests while
	// serving one (multi round-trip requests, SEP-2322, replace them); a
	// program waiting mid-run on an approval cannot use those yet.
	if ip.ProtocolVersion >= "2026-07-28" {
		return false, fmt.Errorf("%w: protocol %s sessions cannot be asked mid-call", bindings.ErrApprovalUnsupported, ip.ProtocolVersion)
	}
	caps := ip.Capabilities.Elicitation
	if caps.Form == nil && caps.URL != nil {
		return false, bindings.ErrApprovalUnsupported
	}
	res, err := a.ss.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: req.Message,
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
	if err != nil {
		return false, err
	}
	if res == nil {
		return false, errors.New("empty elicitation result")
	}
	return res.Action == "accept", nil
}
