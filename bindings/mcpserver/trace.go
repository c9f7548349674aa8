package mcpserver

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandcall/sandcall/sandbox"
)

// TracerName is the instrumentation scope of the server's spans.
const TracerName = "github.com/sandcall/sandcall/bindings/mcpserver"

// Attribute keys of the MCP server span, from the OpenTelemetry semantic
// conventions for MCP (gen-ai/mcp.md, "Server" span), plus
// sandcall.error.code.
const (
	attrMethod    = attribute.Key("mcp.method.name")
	attrSession   = attribute.Key("mcp.session.id")
	attrProtocol  = attribute.Key("mcp.protocol.version")
	attrToolName  = attribute.Key("gen_ai.tool.name")
	attrOperation = attribute.Key("gen_ai.operation.name")
	attrTransport = attribute.Key("network.transport")
	attrProtoName = attribute.Key("network.protocol.name")
	attrErrorType = attribute.Key("error.type")
	attrRPCStatus = attribute.Key("rpc.response.status_code")
	attrCode      = attribute.Key("sandcall.error.code")
)

// TraceMiddleware returns receiving middleware that records one SERVER span
// per MCP request (notifications are not traced), named after the
// semantic conventions: "{mcp.method.name} {gen_ai.tool.name}" for a call
// of a served tool ("tools/call run_code"), "{mcp.method.name}" otherwise
// (a call of an unknown tool included: a client's made-up name is never a
// span name or attribute). Add it
// with srv.MCP().AddReceivingMiddleware; it is then the outermost layer.
//
// The span's parent is the W3C trace context the client put in the
// request's params._meta (traceparent and tracestate: SEP-414 and
// the MCP conventions), or else the one in the HTTP request's headers; when
// both are there and differ, the HTTP one becomes a link. prop extracts
// them; if nil, W3C Trace Context alone (W3C Baggage is left out on
// purpose: sandcall would pass a client's baggage on to every upstream
// server, a channel past the policy).
//
// A client's tracestate is dropped: sandcall's spans do not carry it, so
// it never reaches an upstream server (the same channel past the policy
// as Baggage).
//
// A failed request gets status Error: a JSON-RPC error's code as
// error.type, a tool result with isError as error.type "tool_error" and its
// stable sandcall error code (E_…) as the status description and
// sandcall.error.code — only ever one of sandcall's own codes
// (sandbox.Codes): an upstream tool's error result, served to a direct
// caller as the upstream wrote it, is E_TOOL_FAILED, whatever its text
// says. Arguments and results are never recorded.
func TraceMiddleware(tp trace.TracerProvider, prop propagation.TextMapPropagator) mcp.Middleware {
	tr := tp.Tracer(TracerName)
	if prop == nil {
		prop = propagation.TraceContext{}
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			var hdr propagation.HeaderCarrier
			if ex := req.GetExtra(); ex != nil && ex.Header != nil {
				hdr = propagation.HeaderCarrier(ex.Header)
			}
			var opts []trace.SpanStartOption
			parent := ctx
			if hdr != nil {
				parent = prop.Extract(parent, hdr)
			}
			if p := req.GetParams(); p != nil {
				if mc := metaCarrier(p.GetMeta()); mc != nil {
					mctx := prop.Extract(ctx, mc)
					if msc := trace.SpanContextFromContext(mctx); msc.IsValid() {
						if hsc := trace.SpanContextFromContext(parent); hsc.IsValid() && !hsc.Equal(msc) {
							opts = append(opts, trace.WithLinks(trace.Link{SpanContext: hsc.WithTraceState(trace.TraceState{})}))
						}
						parent = mctx
					}
				}
			}
			if psc := trace.SpanContextFromContext(parent); psc.IsValid() && psc.TraceState().Len() > 0 {
				parent = trace.ContextWithRemoteSpanContext(parent, psc.WithTraceState(trace.TraceState{}))
			}
			attrs := []attribute.KeyValue{attrMethod.String(method)}
			ct, _ := req.GetParams().(*mcp.CallToolParamsRaw)
			if ct != nil {
				attrs = append(attrs, attrOperation.String("execute_tool"))
			}
			if s, ok := req.GetSession().(*mcp.ServerSession); ok && s != nil {
				if id := s.ID(); id != "" {
					attrs = append(attrs, attrSession.String(id))
				}
			}
			if sr, ok := req.(interface{ ProtocolVersion() string }); ok {
				if v := sr.ProtocolVersion(); v != "" {
					attrs = append(attrs, attrProtocol.String(v))
				}
			}
			if hdr != nil {
				attrs = append(attrs, attrTransport.String("tcp"), attrProtoName.String("http"))
			} else {
				attrs = append(attrs, attrTransport.String("pipe"))
			}
			opts = append(opts, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
			ctx, sp := tr.Start(parent, method, opts...)
			defer sp.End()
			var slot codeSlot
			if ct != nil {
				ctx = context.WithValue(ctx, codeSlotKey{}, &slot)
			}
			res, err := next(ctx, method, req)
			if ct != nil && err == nil {
				// The tool exists (the SDK answers an unknown name with a
				// JSON-RPC error): its name may go into the span's name. A
				// name the client made up never does.
				sp.SetName(method + " " + ct.Name)
				sp.SetAttributes(attrToolName.String(ct.Name))
			}
			switch {
			case err != nil:
				code := "_OTHER"
				if we, ok := err.(*jsonrpc.Error); ok {
					code = strconv.FormatInt(we.Code, 10)
				}
				sp.SetAttributes(attrErrorType.String(code), attrRPCStatus.String(code))
				sp.SetStatus(codes.Error, code)
			default:
				if ctr, ok := res.(*mcp.CallToolResult); ok && ctr != nil && ctr.IsError {
					code := resultCode(ctr)
					if slot.upstream.Load() {
						code = string(sandbox.EToolFailed) // the text is the upstream's
					}
					sp.SetAttributes(attrErrorType.String("tool_error"))
					if code != "" {
						sp.SetAttributes(attrCode.String(code))
					}
					sp.SetStatus(codes.Error, code)
				}
			}
			return res, err
		}
	}
}

// metaCarrier returns the trace-context keys of a request's _meta as a
// carrier, or nil when there are none.
func metaCarrier(meta map[string]any) propagation.MapCarrier {
	var mc propagation.MapCarrier
	for _, k := range [...]string{"traceparent", "tracestate"} {
		if v, ok := meta[k].(string); ok && len(v) <= 8<<10 {
			if mc == nil {
				mc = make(propagation.MapCarrier, 3)
			}
			mc[k] = v
		}
	}
	return mc
}

// resultCode is the stable error code (E_…) of a failed tool result: the
// error's code in run_code's structured content, or the code of the JSON
// error in a direct call's text block.
func resultCode(r *mcp.CallToolResult) string {
	var v struct {
		Code  string `json:"code"`
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	var b []byte
	switch sc := r.StructuredContent.(type) {
	case json.RawMessage:
		b = sc
	case nil:
	default:
		b, _ = json.Marshal(sc)
	}
	if len(b) == 0 && len(r.Content) > 0 {
		if tc, ok := r.Content[0].(*mcp.TextContent); ok {
			b = []byte(tc.Text)
		}
	}
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	code := v.Code
	if v.Error != nil && v.Error.Code != "" {
		code = v.Error.Code
	}
	if !sandbox.Code(code).Valid() {
		return ""
	}
	return code
}

// codeSlot is where a tool handler says, for the span of its call, that
// the error result it returns was written by an upstream server (a
// DirectRaw tool's result, served as is): its text is not sandcall's.
type codeSlot struct{ upstream atomic.Bool }

type codeSlotKey struct{}

// markUpstreamError records, for the trace of the call in ctx, that its
// error result is an upstream's own.
func markUpstreamError(ctx context.Context) {
	if s, ok := ctx.Value(codeSlotKey{}).(*codeSlot); ok {
		s.upstream.Store(true)
	}
}
