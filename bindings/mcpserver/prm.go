package mcpserver

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// prmPath is where HTTPHandler serves the OAuth 2.0 Protected Resource
// Metadata (RFC 9728) of /mcp when bearer tokens are configured; the 401
// challenge names it in resource_metadata, as MCP clients expect.
// prmRoot serves the metadata of the server's root, for clients that look
// there first or only (RFC 9728 §3.1 without a path).
const (
	prmRoot = "/.well-known/oauth-protected-resource"
	prmPath = prmRoot + HTTPPath
)

// origin is the scheme://host a request was sent to.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// resourceMetadata serves the protected resource metadata: at prmPath, of
// /mcp; at prmRoot, of the server's root (RFC 9728 §3.3: the resource is
// the URL the well-known path was derived from). Both name the resource
// by the public URL (HostedAuth.PublicURL) if set, else by the origin the
// request was sent to; the authorization servers that issue tokens
// (HostedAuth.AuthorizationServers, or the JWT issuer) and that tokens go
// in the Authorization header. With static tokens only it names no
// authorization server: those tokens are issued by the operator (hashed in
// the config), not obtained through OAuth.
func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	res := s.publicURL(r)
	if r.URL.Path == prmPath {
		res += HTTPPath
	}
	auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               res,
		AuthorizationServers:   s.hosted.authServers,
		ScopesSupported:        s.hosted.scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "sandcall",
	}).ServeHTTP(w, r)
}
