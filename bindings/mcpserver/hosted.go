package mcpserver

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
)

// HostedAuth configures authentication for a server reached over a
// network by clients that get their tokens from an OAuth authorization
// server: JWT bearer tokens, and the protected resource metadata (RFC
// 9728) that tells clients where to get them.
type HostedAuth struct {
	// JWT, if set, makes HTTPHandler accept JWT bearer tokens beside the
	// static Config.Tokens. Each acts for the principal
	// bearer.JWTPrincipalPrefix + its principal claim.
	JWT *bearer.JWTConfig
	// PublicURL is the URL clients reach the server at, scheme://host[:port]
	// with no path (behind a load balancer, not the listen address): the
	// resource is PublicURL + "/mcp", and the default JWT audience. If
	// empty, the metadata names the origin each request was sent to, and
	// a JWT is accepted only if JWT.Audience is set (or SetPublicURL is
	// called).
	PublicURL string
	// AuthorizationServers are the issuer identifiers of the
	// authorization servers that issue tokens for this resource, listed in
	// the metadata. If empty, JWT.Issuer when JWTs are accepted.
	AuthorizationServers []string
	// ScopesSupported are listed in the metadata (scopes_supported).
	ScopesSupported []string
}

// setupHosted applies h: with JWTs, HTTP is authenticated even without
// static tokens; with neither, it does nothing.
func (s *Server) setupHosted(h HostedAuth) error {
	if s.tokens == nil && h.JWT == nil {
		return nil
	}
	if s.tokens == nil {
		s.tokens = &bearer.Verifier{}
	}
	if h.PublicURL != "" {
		if err := s.SetPublicURL(h.PublicURL); err != nil {
			return err
		}
	}
	s.hosted.authServers = slices.Clone(h.AuthorizationServers)
	s.hosted.scopes = slices.Clone(h.ScopesSupported)
	for i, a := range s.hosted.authServers {
		if u, err := url.Parse(a); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("mcpserver: authorization server %d (%q): want an https:// issuer URL", i+1, a)
		}
	}
	s.tokens.SetMetadata(func(r *http.Request) string { return s.publicURL(r) + prmPath })
	if h.JWT == nil {
		return nil
	}
	if err := s.tokens.AcceptJWT(h.JWT, s.log, s.audiences); err != nil {
		return err
	}
	if len(s.hosted.authServers) == 0 {
		s.hosted.authServers = []string{h.JWT.Issuer}
	}
	return nil
}

// hostedAuth is what a server accepting JWTs and publishing protected
// resource metadata knows beyond its tokens (HostedAuth.PublicURL,
// HostedAuth.AuthorizationServers, HostedAuth.ScopesSupported).
type hostedAuth struct {
	public      atomic.Pointer[string]
	authServers []string
	scopes      []string // supported, for the metadata
}

// checkPublicURL returns u without a trailing "/" if it is an absolute
// http(s) URL with no path, query or fragment.
func checkPublicURL(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil ||
		(p.Path != "" && p.Path != "/") || p.RawQuery != "" || p.Fragment != "" {
		return "", fmt.Errorf("mcpserver: public URL %q: want scheme://host[:port], the URL clients reach this server at (no path)", u)
	}
	return strings.TrimSuffix(u, "/"), nil
}

// SetPublicURL sets the URL clients reach the server at (HostedAuth.PublicURL)
// when it is known only once the server listens (port 0). Call it before
// HTTPHandler serves requests.
func (s *Server) SetPublicURL(u string) error {
	u, err := checkPublicURL(u)
	if err != nil {
		return err
	}
	s.hosted.public.Store(&u)
	return nil
}

// PublicURLNeeded reports whether the server accepts JWTs but knows
// neither its public URL nor an explicit audience, so that every JWT
// would be refused until SetPublicURL is called.
func (s *Server) PublicURLNeeded() bool {
	return s.tokens != nil && s.tokens.AcceptsJWT() && len(s.tokens.JWTAudience()) == 0 && s.hosted.public.Load() == nil
}

// publicURL is the configured public URL, or the origin the request was
// sent to.
func (s *Server) publicURL(r *http.Request) string {
	if p := s.hosted.public.Load(); p != nil {
		return *p
	}
	return origin(r)
}

// audiences are the "aud" values a JWT may carry: the configured ones, or
// the resource's URLs (the MCP endpoint and the server's root, the
// resources of the two metadata documents). Empty when neither is known:
// every JWT is then refused.
func (s *Server) audiences() []string {
	if aud := s.tokens.JWTAudience(); len(aud) > 0 {
		return aud
	}
	if p := s.hosted.public.Load(); p != nil {
		return []string{*p + HTTPPath, *p}
	}
	return nil
}
