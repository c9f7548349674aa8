package mcpserver

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tokenHeader carries, from guard to the tool handlers, a random token naming
// the HTTP request that delivered a call, so that a call can be cancelled
// when its request ends early (the client disconnected). A value sent by the
// client is removed first. The SDK hands tool handlers the request headers
// (RequestExtra.Header) but not the request's context, and does not cancel
// handlers of stateful sessions when the request ends.
const tokenHeader = "Sandcall-Internal-Request"

// HTTPPath is where HTTPHandler serves streamable HTTP.
const HTTPPath = "/mcp"

// HTTPHandler returns an http.Handler serving MCP over streamable HTTP at
// /mcp. Other paths are 404. Both protocol generations are served, chosen
// per request (see versionRouter): a request of protocol 2026-07-28 or
// later (MCP-Protocol-Version header) is stateless — no initialize, no
// Mcp-Session-Id, its version and client capabilities in its _meta, its
// MCP-Protocol-Version, Mcp-Method and Mcp-Name headers checked against the
// body, progress on its own response stream, cancelled (the run ends
// E_CANCELLED) when the client closes that stream; any replica can serve
// it. Older requests keep stateful sessions (SSE responses).
//
// Protections, all on:
//   - DNS rebinding: the SDK refuses (403) a request that arrives on a
//     loopback address with a Host header that is not loopback
//     (StreamableHTTPOptions.DisableLocalhostProtection stays false).
//   - Cross-origin: a request whose Origin header names an origin other
//     than the Host it was sent to (and not in Config.AllowedOrigins) is
//     refused with 403, whatever the method; http.CrossOriginProtection also
//     refuses cross-site browser POSTs (Sec-Fetch-Site).
//   - Size: a body over Config.MaxRequestBytes is refused with 413.
//   - Rate: with Config.RateLimit, a request over its principal's allowance
//     is refused with 429 and Retry-After (after authentication).
//
// GET /healthz answers 200 while the process serves; GET /readyz 200 while
// it takes work, 503 once Drain was called (both without authentication,
// for probes). While draining, every new POST to /mcp gets 503 with
// Retry-After.
//
// Authentication: with Config.Tokens, every request to /mcp (and /metrics)
// needs "Authorization: Bearer <token>" with one of the tokens, or gets 401
// with a WWW-Authenticate challenge (go-sdk's auth.RequireBearerToken); each
// session acts for its token's principal and is bound to it. With
// Config.Hosted.JWT, a JWT signed by the configured issuer's keys is
// accepted too (see JWTConfig; it acts for "jwt:<sub>"), and a 401 or 403
// says why (error, error_description, RFC 6750) and where the protected
// resource metadata is (resource_metadata, RFC 9728), served at
// /.well-known/oauth-protected-resource/mcp and at the root form. Without
// tokens there is no authentication: serve only on loopback, or behind a
// proxy that authenticates.
func (s *Server) HTTPHandler() http.Handler {
	idle := s.idle
	if idle < 0 {
		idle = 0
	}
	stateful := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:              s.log,
		MaxRequestBodyBytes: s.maxBody,
		SessionTimeout:      idle,
	})
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:                       s.log,
		MaxRequestBodyBytes:          s.maxBody,
		Stateless:                    true,
		PropagateRequestCancellation: true,
	})
	h := &versionRouter{stateful: newCancelFilter(stateful, s.maxBody), stateless: stateless}
	cop := http.NewCrossOriginProtection()
	for o := range s.origins {
		_ = cop.AddTrustedOrigin(o) // validated in New
	}
	mux := http.NewServeMux()
	var mcpH http.Handler = s.rateLimit(&guard{s: s, next: h, cop: cop})
	metrics := s.metrics
	if s.tokens != nil {
		mcpH = s.tokens.Require(mcpH)
		if metrics != nil {
			metrics = s.tokens.Require(metrics)
		}
		mux.HandleFunc("GET "+prmPath, s.resourceMetadata)
		mux.HandleFunc("GET "+prmRoot, s.resourceMetadata)
	}
	mux.Handle(HTTPPath, mcpH)
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
	}
	return mux
}

var _ http.Handler = (*guard)(nil)

// guard applies the checks of HTTPHandler before the SDK sees a request.
type guard struct {
	s    *Server
	next http.Handler
	cop  *http.CrossOriginProtection
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" && !g.originAllowed(o, r.Host) {
		http.Error(w, fmt.Sprintf("Forbidden: origin %q may not use this server", truncate(o, 100)), http.StatusForbidden)
		return
	}
	if err := g.cop.Check(r); err != nil {
		http.Error(w, "Forbidden: cross-origin request", http.StatusForbidden)
		return
	}
	if r.ContentLength > g.s.maxBody {
		http.Error(w, fmt.Sprintf("Request Entity Too Large: the body is %d bytes; this server accepts at most %d", r.ContentLength, g.s.maxBody),
			http.StatusRequestEntityTooLarge)
		return
	}
	r.Header.Del(tokenHeader)
	if r.Method == http.MethodPost {
		if !g.s.drain.enter() {
			refuseDraining(w)
			return
		}
		defer g.s.drain.leave()
		tok := rand.Text()
		r.Header.Set(tokenHeader, tok)
		g.s.inflight.Store(tok, r.Context())
		defer g.s.inflight.Delete(tok)
	}
	g.next.ServeHTTP(w, r)
}

// originAllowed reports whether a request from origin o may reach a server
// addressed as host: same origin, or listed in Config.AllowedOrigins.
func (g *guard) originAllowed(o, host string) bool {
	n, ok := normalizeOrigin(o)
	if !ok {
		return false
	}
	if g.s.origins[n] {
		return true
	}
	u, _ := url.Parse(n)
	return strings.EqualFold(u.Host, host)
}

// normalizeOrigin returns scheme://host[:port] in lower case, or false when o
// is not such an origin ("null" included).
func normalizeOrigin(o string) (string, bool) {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
