package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
	"github.com/sandcall/sandcall/tools"
)

// principalFor returns the principal a request acts for: the bearer
// token's over authenticated HTTP, otherwise the configured principal. A
// client never names its principal.
func (s *Server) principalFor(req mcp.Request) bindings.Principal {
	if req != nil {
		if ex := req.GetExtra(); ex != nil {
			if p, ok := bearer.PrincipalOf(ex.TokenInfo); ok {
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
// by the old name still work, but not listed). It pages the filtered list
// itself (listpages.go): the SDK hands it the whole registered list in one
// page, so no page is empty or null because its tools were all filtered
// out.
func (s *Server) filterToolsList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		lreq, isList := req.(*mcp.ListToolsRequest)
		if method != "tools/list" || !isList {
			return next(ctx, method, req)
		}
		var after listPosition
		if lreq.Params != nil && lreq.Params.Cursor != "" {
			var ok bool
			if after, ok = decodeListCursor(lreq.Params.Cursor); !ok {
				return nil, invalidCursor()
			}
		}
		// The SDK's own paging is off (ServerOptions.PageSize): the whole
		// list, unfiltered, from the start.
		whole := &mcp.ListToolsRequest{Session: lreq.Session, Extra: lreq.Extra, Params: &mcp.ListToolsParams{}}
		if lreq.Params != nil {
			whole.Params.Meta = lreq.Params.Meta
		}
		res, err := next(ctx, method, whole)
		if err != nil {
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
		s.mu.Unlock()
		var ok2 map[string]bool // nil: every tool not hidden
		p := s.principalFor(req)
		if s.tokens != nil {
			ok2 = map[string]bool{RunCodeName: true, ReadOutputName: true}
			for _, t := range s.broker.Exposed(tools.Direct, p) {
				ok2[t.Name] = true
			}
		}
		c := *lr
		c.Tools = make([]*mcp.Tool, 0, len(lr.Tools))
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
		c.Tools, c.NextCursor = listPage(c.Tools, after, listPageSize)
		return &c, nil
	}
}
