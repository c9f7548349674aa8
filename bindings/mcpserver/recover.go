package mcpserver

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox"
)

// The go-sdk does not recover panics: a panicking handler would take the
// whole process, and every session with it, down. Two layers turn a panic
// into an answer. safe wraps each tool handler and answers an isError result
// with E_INTERNAL (the model sees a readable failure); recoverMiddleware
// catches whatever else panics while handling a request. The panic and its
// stack go to the Logger, never to the client.

func internalError() *sandbox.Error {
	return sandbox.Errorf(sandbox.EInternal, "This is a bug in the server, not in your request; trying again may work.",
		"the server failed with an internal error")
}

// safe wraps a tool handler so that a panic becomes an E_INTERNAL result.
func (s *Server) safe(name string, h mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("mcpserver: tool handler panicked", "tool", name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				res, err = s.internalResult(name), nil
			}
		}()
		return h(ctx, req)
	}
}

// recoverMiddleware turns a panic anywhere below it into an E_INTERNAL tool
// result (tools/call) or a JSON-RPC internal error (other methods).
func (s *Server) recoverMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("mcpserver: request handler panicked", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if method == "tools/call" {
					name := ""
					if r, ok := req.(*mcp.CallToolRequest); ok && r != nil && r.Params != nil {
						name = r.Params.Name
					}
					res, err = s.internalResult(name), nil
					return
				}
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
			}
		}()
		return next(ctx, method, req)
	}
}
