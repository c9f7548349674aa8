package upstream

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// TestTraceStdioUpstream: a program's call to a stdio upstream carries the
// upstream CLIENT span's trace context in params._meta. The upstream is the
// real `sandcall serve --demo` with tracing on, exporting to an in-test
// OTLP/HTTP receiver (decoded with the official protobuf types): its SERVER
// span for the call has the client span as parent, in the same trace.
func TestTraceStdioUpstream(t *testing.T) {
	got := make(chan *tracepb.Span, 64)
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					select {
					case got <- sp:
					default:
					}
				}
			}
		}
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Write(out)
	}))
	defer col.Close()

	root := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": bin, "timeout": "30s",
			"args": []string{"serve", "--demo", "--isolation", "inprocess", "--otlp-endpoint", col.URL},
			"env":  map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "10"}},
	}})
	writeFile(t, filepath.Join(root, ".mcp.json"), string(cfg))
	cat, err := tools.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	set := Attach(ctx, cat, Options{Config: LoadConfig{Root: root}})
	t.Cleanup(set.Close)

	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTracerProvider(prevTP); otel.SetTextMapPropagator(prevProp) })

	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat, Tracer: tp})
	if err != nil {
		t.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(ctx, bindings.RunRequest{Program: sandbox.Program{Source: `return await tools.demo_ping({n: 1})`}})
	if !res.OK || string(res.Result) != "2" {
		t.Fatalf("run: %s %+v", res.Result, res.Error)
	}
	var client sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "tools/call ping" {
			client = s
		}
	}
	if client == nil || client.SpanKind().String() != "client" {
		t.Fatalf("no upstream CLIENT span; spans: %d", len(rec.Ended()))
	}
	wantTrace, wantParent := client.SpanContext().TraceID().String(), client.SpanContext().SpanID().String()
	deadline := time.After(time.Minute)
	for {
		select {
		case sp := <-got:
			if sp.Name != "tools/call ping" || sp.Kind != tracepb.Span_SPAN_KIND_SERVER {
				continue
			}
			if hex.EncodeToString(sp.TraceId) != wantTrace || hex.EncodeToString(sp.ParentSpanId) != wantParent {
				t.Fatalf("upstream's server span: trace %x parent %x; want %s/%s", sp.TraceId, sp.ParentSpanId, wantTrace, wantParent)
			}
			return
		case <-deadline:
			t.Fatal("the upstream exported no server span for the call within a minute")
		}
	}
}
