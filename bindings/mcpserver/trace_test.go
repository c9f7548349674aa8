package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// TestTraceMiddleware: over streamable HTTP with the go-sdk client, a call
// of an unknown tool gets a span named "tools/call" only, with the
// JSON-RPC error code as error.type and no tool name; a failed direct call
// gets status Error with its stable code; the HTTP traceparent is the
// parent when _meta has none.
func TestTraceMiddleware(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	type PingArgs struct {
		N int `json:"n"`
	}
	ping := tools.MustFunc(tools.Tool{Name: "ping", Description: "Returns n + 1."},
		func(_ context.Context, in PingArgs) (int, error) { return in.N + 1, nil })
	cat, _ := tools.NewCatalog(ping)
	broker, _ := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat, Tracer: tp})
	runner, _ := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{})})
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner})
	if err != nil {
		t.Fatal(err)
	}
	srv.MCP().AddReceivingMiddleware(mcpserver.TraceMiddleware(tp, nil))
	ts := httptest.NewServer(srv.HTTPHandler())
	defer ts.Close()

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	hc := &http.Client{Transport: traceRoundTrip(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
		return http.DefaultTransport.RoundTrip(r)
	})}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + mcpserver.HTTPPath, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no-such-tool-s3cr3t", Arguments: map[string]any{}}); err == nil {
		t.Fatal("an unknown tool was called")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{"n": "x"}})
	if err != nil || !res.IsError {
		t.Fatalf("bad ping: %v %v", err, res)
	}

	var unknown, bad sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.SpanKind().String() != "server" {
			continue
		}
		if s.SpanContext().TraceID().String() != traceID {
			t.Errorf("span %s in trace %s, want the HTTP traceparent's %s", s.Name(), s.SpanContext().TraceID(), traceID)
		}
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "s3cr3t") {
				t.Errorf("span %s carries the client's made-up tool name in %s", s.Name(), kv.Key)
			}
		}
		switch s.Name() {
		case "tools/call":
			unknown = s
		case "tools/call ping":
			bad = s
		}
	}
	if unknown == nil || bad == nil {
		t.Fatalf("spans: unknown %v, bad ping %v", unknown != nil, bad != nil)
	}
	if unknown.Status().Code != codes.Error || traceAttr(unknown, "error.type") == "" || traceAttr(unknown, "gen_ai.tool.name") != "" {
		t.Errorf("unknown tool span: %v %v", unknown.Status(), unknown.Attributes())
	}
	if bad.Status().Code != codes.Error || bad.Status().Description != "E_TOOL_ARGS" || traceAttr(bad, "error.type") != "tool_error" ||
		traceAttr(bad, "sandcall.error.code") != "E_TOOL_ARGS" || traceAttr(bad, "gen_ai.tool.name") != "ping" || traceAttr(bad, "network.transport") != "tcp" {
		t.Errorf("bad ping span: %v %v", bad.Status(), bad.Attributes())
	}
}

func traceAttr(s sdktrace.ReadOnlySpan, k string) string {
	for _, kv := range s.Attributes() {
		if kv.Key == attribute.Key(k) {
			return kv.Value.Emit()
		}
	}
	return ""
}

type traceRoundTrip func(*http.Request) (*http.Response, error)

func (f traceRoundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
