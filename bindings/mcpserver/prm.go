package mcpserver

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// prmPath is where HTTPHandler serves the OAuth 2.0 Protected Resource
// Metadata (RFC 9728) of /mcp when bearer tokens are configured; the 401
// challenge names it in resource_metadata, as MCP clients expect.
const prmPath = "/.well-known/oauth-protected-resource" + HTTPPath

// origin is the scheme://host a request was sent to.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// resourceMetadata serves the protected resource metadata of /mcp: the
// resource and that tokens go in the Authorization header. It names no
// authorization server: sandcall's tokens are issued by its operator
// (hashed in the config), not obtained through OAuth.
func resourceMetadata(w http.ResponseWriter, r *http.Request) {
	auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               origin(r) + HTTPPath,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "sandcall",
	}).ServeHTTP(w, r)
}
