package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// TestOversizedAnswer: a stdio server answers a call with 26 MiB (over the
// 16 MiB frame cap). The call fails with E_TOOL_FAILED, not retryable (the
// same call would fail the same way), with a hint that says how to ask for
// less; the connection stays up, so the next call succeeds at once, on the
// same server process.
func TestOversizedAnswer(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: node is not installed (the test's stdio server is a Node script)")
	}
	server, err := filepath.Abs(filepath.Join("testdata", "big_server.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	set, big, small := attachBig(t, ctx, map[string]any{"command": node, "args": []string{server}, "timeout": "60s"})
	pid := set.pid("big")
	for i := range 2 { // twice: the connection survives each
		_, err = big.Handler(ctx, json.RawMessage(`{"mb": 26}`))
		se := sandbox.AsError(err, "")
		if err == nil || se.Code != sandbox.EToolFailed || se.Retryable ||
			!strings.Contains(se.Message, "16 MiB") || !strings.Contains(strings.ToLower(se.Hint), "less") {
			t.Fatalf("26 MiB answer %d: %+v, want a non-retryable E_TOOL_FAILED naming the cap, with a way out", i+1, se)
		}
		if strings.Contains(se.Hint+se.Message, "down") {
			t.Errorf("26 MiB answer %d blames the server's availability: %+v", i+1, se)
		}
		res, err := small.Handler(ctx, json.RawMessage(`{}`))
		if err != nil || string(res) != `"ok"` {
			t.Fatalf("the call after the oversized answer %d: %s %v, want \"ok\"", i+1, res, err)
		}
	}
	if set.pid("big") != pid {
		t.Errorf("the server was restarted (pid %d, was %d); want the connection kept", set.pid("big"), pid)
	}
}

// TestOversizedAnswerHTTP: the same over streamable HTTP (the go-sdk
// server answering with an event stream): the oversized answer is a
// non-retryable E_TOOL_FAILED, and the next call succeeds.
func TestOversizedAnswerHTTP(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
	in := &jsonschema.Schema{Type: "object"}
	srv.AddTool(&mcp.Tool{Name: "big", InputSchema: in, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 17<<20)}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "small", InputSchema: in, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, big, small := attachBig(t, ctx, map[string]any{"type": "http", "url": ts.URL, "timeout": "60s"})
	for i := range 2 {
		_, err := big.Handler(ctx, json.RawMessage(`{}`)) // 17 MiB
		se := sandbox.AsError(err, "")
		if err == nil || se.Code != sandbox.EToolFailed || se.Retryable || !strings.Contains(strings.ToLower(se.Hint), "less") {
			t.Fatalf("26 MiB answer %d: %+v, want a non-retryable E_TOOL_FAILED with a way out", i+1, se)
		}
		res, err := small.Handler(ctx, json.RawMessage(`{}`))
		if err != nil || string(res) != `"ok"` {
			t.Fatalf("the call after the oversized answer %d: %s %v, want \"ok\"", i+1, res, err)
		}
	}
}

// attachBig attaches the server def as "big" and returns the set and its
// tools big_big and big_small.
func attachBig(t *testing.T, ctx context.Context, def map[string]any) (set *Set, big, small *tools.Tool) {
	t.Helper()
	root := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"big": def}})
	writeFile(t, filepath.Join(root, ".mcp.json"), string(cfg))
	cat, err := tools.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	set = Attach(ctx, cat, Options{Config: LoadConfig{Root: root}})
	t.Cleanup(set.Close)
	big, ok1 := cat.Lookup("big_big")
	small, ok2 := cat.Lookup("big_small")
	if !ok1 || !ok2 || len(set.Warnings()) > 0 {
		t.Fatalf("tools %v, warnings %v", set.Tools(), set.Warnings())
	}
	return set, big, small
}
