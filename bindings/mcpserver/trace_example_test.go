package mcpserver_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// Trace an embedded server: the broker records a span per run and per tool
// call (BrokerConfig.Tracer), TraceMiddleware one per MCP request, parented
// by the traceparent the client put in the request's _meta. Here the spans
// go to an in-memory recorder; sandcall serve exports them over OTLP/HTTP.
func ExampleTraceMiddleware() {
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
		panic(err)
	}
	srv.MCP().AddReceivingMiddleware(mcpserver.TraceMiddleware(tp, nil))

	ctx := context.Background()
	clientT, serverT := mcp.NewInMemoryTransports()
	go srv.Run(ctx, serverT)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		panic(err)
	}
	_, _ = cs.CallTool(ctx, &mcp.CallToolParams{
		Name:      "run_code",
		Arguments: map[string]any{"code": `return await tools.ping({n: 1}) + await tools.ping({n: 2})`},
		Meta:      mcp.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	})
	cs.Close()

	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
			continue // initialize, server/discover, tools/list: traces of their own
		}
		fmt.Println(s.SpanKind(), s.Name(), s.SpanContext().TraceID())
	}
	// Output:
	// internal execute_tool ping 4bf92f3577b34da6a3ce929d0e0e4736
	// internal execute_tool ping 4bf92f3577b34da6a3ce929d0e0e4736
	// internal run_code 4bf92f3577b34da6a3ce929d0e0e4736
	// server tools/call run_code 4bf92f3577b34da6a3ce929d0e0e4736
}
