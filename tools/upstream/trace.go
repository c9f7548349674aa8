package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// Tracing. The package uses OpenTelemetry's global tracer provider and
// propagator (otel.SetTracerProvider, otel.SetTextMapPropagator), which
// sandcall sets only when tracing is switched on. A call made inside a
// trace (its context holds a valid span: the broker's tool-call span) gets
// a CLIENT span "tools/call {tool}" (the MCP semantic conventions' client
// span), and that span's W3C trace context goes to the upstream server
// twice: in the HTTP request's traceparent/tracestate headers (streamable
// HTTP and SSE servers) and in the request's params._meta (SEP-414), which
// reaches stdio servers too. Outside a trace nothing is recorded or sent,
// and the cost is one context lookup per call.

// TracerName is the instrumentation scope of the upstream call spans.
const TracerName = "github.com/sandcall/sandcall/tools/upstream"

// traced wraps a tool's handler with the CLIENT span of the upstream call.
func (c *Conn) traced(upstreamName string, h tools.Handler) tools.Handler {
	return func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		if !trace.SpanContextFromContext(ctx).IsValid() {
			return h(ctx, args)
		}
		attrs := []attribute.KeyValue{
			attribute.String("mcp.method.name", "tools/call"),
			attribute.String("gen_ai.tool.name", upstreamName),
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("sandcall.upstream.server", c.Server.Name),
		}
		if c.Server.URL != "" {
			attrs = append(attrs, attribute.String("network.transport", "tcp"), attribute.String("network.protocol.name", "http"))
			if u, err := url.Parse(c.Server.URL); err == nil {
				// Host and port only: a URL's path or query may hold a secret.
				attrs = append(attrs, attribute.String("server.address", u.Hostname()))
				if p, err := strconv.Atoi(u.Port()); err == nil {
					attrs = append(attrs, attribute.Int("server.port", p))
				}
			}
		} else {
			attrs = append(attrs, attribute.String("network.transport", "pipe"))
		}
		// The global provider is looked up at each call, not kept: a tracer
		// taken from the global before a provider is set would stay with
		// the first one ever set.
		ctx, sp := otel.Tracer(TracerName).Start(ctx, "tools/call "+upstreamName, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attrs...))
		defer sp.End()
		res, err := h(ctx, args)
		if err != nil {
			code := string(sandbox.AsError(err, sandbox.EToolFailed).Code)
			sp.SetAttributes(attribute.String("error.type", code))
			sp.SetStatus(codes.Error, code)
		}
		return res, err
	}
}

// traceMeta puts the W3C trace context of ctx's span into params._meta
// (SEP-414: the keys unprefixed), when ctx is inside a trace.
func traceMeta(ctx context.Context, params *mcp.CallToolParams) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	mc := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, mc)
	if len(mc) == 0 {
		return
	}
	if params.Meta == nil {
		params.Meta = mcp.Meta{}
	}
	for k, v := range mc {
		params.Meta[k] = v
	}
}

// traceHeaders returns req with the W3C trace context of its context's span
// in its headers (a clone: a RoundTripper must not change its request), or
// req itself outside a trace.
func traceHeaders(req *http.Request) *http.Request {
	if !trace.SpanContextFromContext(req.Context()).IsValid() {
		return req
	}
	req = req.Clone(req.Context())
	otel.GetTextMapPropagator().Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	return req
}
