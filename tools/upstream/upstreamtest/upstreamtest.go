// Package upstreamtest is an upstream MCP server for tests of sandcall's
// upstream support: an "echo" tool (two content blocks, structured
// content with an output schema, an error result for "fail"), served over
// streamable HTTP behind a bearer-token check.
//
// It is a test helper: the tests of tools/upstream and cmd/sandcall use
// it, production code does not.
//
//	ts := httptest.NewServer(upstreamtest.AuthHandler(upstreamtest.NewUpstream()))
//	// .mcp.json: {"type": "http", "url": ts.URL, "headers": {"Authorization": "Bearer " + upstreamtest.GoodToken}}
package upstreamtest

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tokens AuthHandler knows: GoodToken may call, LimitedToken is
// authenticated but not allowed (403), anything else is 401.
const (
	GoodToken    = "t0k3n-good-0123456789"
	LimitedToken = "t0k3n-limited-0123456789"
)

// EchoResult is what the echo tool answers: two content blocks and
// structured content, to check that direct callers get it as is.
func EchoResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: "echo: " + msg},
			&mcp.TextContent{Text: "second block"},
		},
		StructuredContent: map[string]any{"echo": msg, "n": float64(len(msg))},
	}
}

// EchoOutput is the echo tool's output schema.
var EchoOutput = map[string]any{
	"type":       "object",
	"properties": map[string]any{"echo": map[string]any{"type": "string"}, "n": map[string]any{"type": "number"}},
	"required":   []any{"echo", "n"},
}

// EchoTool is the echo tool's definition with description (tests change
// it to see a changed definition).
func EchoTool(description string) *mcp.Tool {
	return &mcp.Tool{
		Name:         "echo",
		Description:  description,
		InputSchema:  &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"msg": {Type: "string"}}, Required: []string{"msg"}},
		OutputSchema: EchoOutput,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}
}

// EchoHandler answers EchoResult(msg), or an error result for msg "fail".
func EchoHandler(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct{ Msg string }
	if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
		return nil, err
	}
	if a.Msg == "fail" {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "echo refuses to fail"}}}, nil
	}
	return EchoResult(a.Msg), nil
}

// NewUpstream returns an MCP server with the echo tool.
func NewUpstream() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	srv.AddTool(EchoTool("Echoes a message."), EchoHandler)
	return srv
}

// AuthHandler serves srv over streamable HTTP behind a bearer-token check.
func AuthHandler(srv *mcp.Server) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Bearer " + GoodToken:
			h.ServeHTTP(w, r)
		case "Bearer " + LimitedToken:
			http.Error(w, "this token may not use this server", http.StatusForbidden)
		default:
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "missing or bad token", http.StatusUnauthorized)
		}
	})
}

// ServeOn serves AuthHandler(NewUpstream()) on l, a listener the test
// took for a port it had to know before the upstream is up (to test a
// late upstream); the caller closes the server.
func ServeOn(l net.Listener) *httptest.Server {
	ts := httptest.NewUnstartedServer(AuthHandler(NewUpstream()))
	ts.Listener.Close()
	ts.Listener = l
	ts.Start()
	return ts
}
