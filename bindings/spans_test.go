package bindings

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/wasm"
	"github.com/sandcall/sandcall/tools"
)

func tracedProvider(t testing.TB) (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp, rec
}

func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestTraceRunAndCalls: with a tracer, a run gets a span under the
// caller's, and each call a span under the run's, in the JavaScript and
// the WebAssembly engines alike; a refused call's span has status Error
// with the stable code, and no span carries the code or the arguments.
func TestTraceRunAndCalls(t *testing.T) {
	mod, err := os.ReadFile("../sandbox/wasm/testdata/call_tool.wasm")
	if err != nil {
		t.Fatal(err)
	}
	we, err := wasm.New(wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ping := &tools.Tool{Name: "ping", Description: "Adds one.", InputSchema: open, Source: "demo",
		Handler: func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`42`), nil
		}}
	for _, tc := range []struct {
		name  string
		exec  sandbox.Executor
		prog  sandbox.Program
		calls int
	}{
		{"javascript", js.New(js.Config{}), sandbox.Program{Source: `// s3cr3t
			await tools.ping({n: "s3cr3t"});
			try { await tools.nope({}); } catch (e) {}
			return 1`}, 2},
		{"wasm", we, sandbox.Program{Language: sandbox.WASM, Module: mod}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp, rec := tracedProvider(t)
			b := newBroker(t, BrokerConfig{Tracer: tp}, ping)
			r, err := NewRunner(RunnerConfig{Broker: b, Executor: tc.exec, Tier: "test",
				Languages: []sandbox.Language{sandbox.JavaScript, sandbox.WASM}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, parent := tp.Tracer("test").Start(context.Background(), "parent")
			res := r.Run(ctx, RunRequest{Program: tc.prog})
			parent.End()
			if !res.OK {
				t.Fatalf("run: %+v", res.Error)
			}
			var run sdktrace.ReadOnlySpan
			var calls []sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				for _, kv := range s.Attributes() {
					if strings.Contains(kv.Value.Emit(), "s3cr3t") {
						t.Errorf("span %s attribute %s carries the code or the arguments", s.Name(), kv.Key)
					}
				}
				switch {
				case s.Name() == "run_code":
					run = s
				case strings.HasPrefix(s.Name(), "execute_tool"):
					calls = append(calls, s)
				}
			}
			if run == nil {
				t.Fatal("no run span")
			}
			if run.Parent().SpanID() != parent.SpanContext().SpanID() {
				t.Errorf("the run span's parent is not the caller's span")
			}
			a := spanAttrs(run)
			if a[attrLanguage].AsString() != tc.name || a[attrTier].AsString() != "test" || a[attrCalls].AsInt64() != int64(tc.calls) ||
				a[attrRunID].AsString() != res.RunID {
				t.Errorf("run span attributes: %v", run.Attributes())
			}
			if len(calls) != tc.calls {
				t.Fatalf("%d call spans, want %d", len(calls), tc.calls)
			}
			for _, c := range calls {
				if c.Parent().SpanID() != run.SpanContext().SpanID() {
					t.Errorf("call span %s is not under the run span", c.Name())
				}
				a := spanAttrs(c)
				switch c.Name() {
				case "execute_tool ping":
					if a[attrToolName].AsString() != "ping" || a[attrSource].AsString() != "demo" || a[attrDecision].AsString() != "allow" ||
						c.Status().Code == codes.Error {
						t.Errorf("ping span: %v %v", c.Attributes(), c.Status())
					}
				case "execute_tool": // the unknown tool: its name is the guest's, never the span's
					if c.Status().Code != codes.Error || c.Status().Description != string(sandbox.EToolUnknown) ||
						a[attrErrorType].AsString() != string(sandbox.EToolUnknown) || a[attrToolName].AsString() != "" {
						t.Errorf("unknown tool span: %v %v", c.Attributes(), c.Status())
					}
				default:
					t.Errorf("unexpected call span %q", c.Name())
				}
			}
		})
	}
}

// TestTraceApprovalEvent: the wait for a person's answer is an event of
// the call's span, with its outcome.
func TestTraceApprovalEvent(t *testing.T) {
	tp, rec := tracedProvider(t)
	b, _ := approvalBroker(t, BrokerConfig{Tracer: tp})
	for _, ok := range []bool{true, false} {
		_, err := b.Direct(context.Background(), DirectCall{Principal: LocalPrincipal, Tool: "pay", Args: json.RawMessage(`{"amount":1}`),
			Approver: ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return ok, nil })})
		if (err == nil) != ok {
			t.Fatalf("approval %v: %v", ok, err)
		}
	}
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	for i, want := range []string{"approved", "declined"} {
		s := spans[i]
		if len(s.Events()) != 1 || s.Events()[0].Name != "sandcall.approval" {
			t.Fatalf("span %d events: %v", i, s.Events())
		}
		ev := s.Events()[0]
		var outcome string
		for _, kv := range ev.Attributes {
			if kv.Key == attrApproval {
				outcome = kv.Value.AsString()
			}
		}
		if outcome != want {
			t.Errorf("span %d approval outcome %q, want %q", i, outcome, want)
		}
		if a := spanAttrs(s); a[attrCaller].AsString() != "direct" || a[attrRule].AsString() != "ask" {
			t.Errorf("span %d attributes: %v", i, s.Attributes())
		}
	}
	if spans[1].Status().Code != codes.Error || spans[1].Status().Description != string(sandbox.EToolDenied) {
		t.Errorf("declined call's status: %v", spans[1].Status())
	}
}

// BenchmarkCallTraced is BenchmarkCall with tracing on as serve sets it up
// (every span sampled, a batch span processor, an exporter that discards):
// the cost of a call span.
func BenchmarkCallTraced(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { tp.Shutdown(context.Background()) })
	c, _ := tools.NewCatalog(echo("ping"))
	br, _ := NewBroker(BrokerConfig{Catalog: c, Tracer: tp})
	r := newRun(br, sandbox.Limits{MaxCalls: 1 << 30})
	args := json.RawMessage(`{"n":1}`)
	ctx, sp := tp.Tracer("bench").Start(context.Background(), "run")
	defer sp.End()
	if !trace.SpanFromContext(ctx).IsRecording() {
		b.Fatal("tracing is not on")
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Call(ctx, "ping", args); err != nil {
			b.Fatal(err)
		}
	}
}
