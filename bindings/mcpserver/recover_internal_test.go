package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox"
)

// TestRecoverMiddleware: a panic below the middleware becomes an E_INTERNAL
// tool result for tools/call and a JSON-RPC internal error otherwise.
func TestRecoverMiddleware(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	h := s.recoverMiddleware(func(context.Context, string, mcp.Request) (mcp.Result, error) { panic("boom") })

	res, err := h(context.Background(), "tools/call", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctr, ok := res.(*mcp.CallToolResult)
	if !ok || !ctr.IsError {
		t.Fatalf("tools/call: %#v", res)
	}
	var e sandbox.Error
	if err := json.Unmarshal([]byte(ctr.Content[0].(*mcp.TextContent).Text), &e); err != nil || e.Code != sandbox.EInternal {
		t.Fatalf("tools/call: %v %+v", err, e)
	}

	// For run_code, the failure is a whole Result, which its output schema
	// describes.
	res, err = h(context.Background(), "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: RunCodeName}})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		OK    bool
		Error *sandbox.Error
	}
	b, _ := json.Marshal(res.(*mcp.CallToolResult).StructuredContent)
	if err := json.Unmarshal(b, &r); err != nil || r.OK || r.Error == nil || r.Error.Code != sandbox.EInternal {
		t.Fatalf("run_code: %s", b)
	}

	_, err = h(context.Background(), "tools/list", nil)
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInternalError {
		t.Fatalf("tools/list: %v", err)
	}
}
