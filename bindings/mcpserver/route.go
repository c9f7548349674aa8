package mcpserver

import (
	"context"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// statelessVersion is the first MCP revision without sessions (no
// initialize, no Mcp-Session-Id; version and client capabilities in each
// request's _meta). Revisions are dates, so they compare as strings.
const statelessVersion = "2026-07-28"

// versionRouter sends each HTTP request to the handler of its protocol
// generation: a request whose MCP-Protocol-Version header names 2026-07-28
// or later goes to the stateless handler (one ephemeral session per
// request, cancelled when the client closes the response stream); every
// other request (initialize, a request of an older session, GET and DELETE
// of a session) to the stateful one. The go-sdk serves 2026-07-28 only on
// a handler with StreamableHTTPOptions.Stateless, and older revisions need
// sessions, hence two handlers sharing one mcp.Server.
type versionRouter struct {
	stateful, stateless http.Handler
}

func (v *versionRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isStatelessRequest(r) {
		v.stateless.ServeHTTP(w, r)
		return
	}
	v.stateful.ServeHTTP(w, r)
}

// isStatelessRequest reports whether r belongs to the stateless generation.
func isStatelessRequest(r *http.Request) bool {
	return r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("Mcp-Protocol-Version") >= statelessVersion
}

// toolsListTTL is how long a client may keep a tools/list result of the
// 2026-07-28 protocol (SEP-2549 ttlMs). A change within that time still
// reaches subscribed clients as notifications/tools/list_changed; a client
// that does not subscribe sees it at most this late.
const toolsListTTL = 60 * time.Second

// setCacheable marks tools/list results cacheable for toolsListTTL. The
// list depends on the principal when bearer tokens are configured, so it is
// then "private" (only the requesting user's client may cache it), else
// "public". Other results keep the SDK's defaults (immediately stale).
func (s *Server) setCacheable(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	if _, ok := req.(*mcp.ListToolsRequest); !ok {
		return
	}
	c.TTLMs = int(toolsListTTL / time.Millisecond)
	c.CacheScope = "public"
	if s.tokens != nil {
		c.CacheScope = "private"
	}
}
