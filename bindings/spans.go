package bindings

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandcall/sandcall/sandbox"
)

// Tracing (OpenTelemetry). With BrokerConfig.Tracer set, the broker records
// one span per run (Runner.Run) and one per tool call (every call a program
// or a direct caller makes, the refused ones included); without it, it
// records nothing and costs one nil check per call.
//
// The names follow the OpenTelemetry GenAI semantic conventions where they
// exist (gen_ai.operation.name, gen_ai.tool.name, error.type); the rest are
// sandcall's own, under "sandcall.". No span carries a program's code, a
// call's arguments or a result: only names, sizes, counts, decisions and
// the stable error code.

// TracerName is the instrumentation scope of the broker's spans.
const TracerName = "github.com/sandcall/sandcall/bindings"

// Attribute keys of the broker's spans (docs/operations.md, "Tracing").
const (
	attrOperation  = attribute.Key("gen_ai.operation.name")
	attrToolName   = attribute.Key("gen_ai.tool.name")
	attrErrorType  = attribute.Key("error.type")
	attrRunID      = attribute.Key("sandcall.run.id")
	attrLanguage   = attribute.Key("sandcall.run.language")
	attrTier       = attribute.Key("sandcall.run.tier")
	attrCalls      = attribute.Key("sandcall.run.calls")
	attrResultSize = attribute.Key("sandcall.run.result_bytes")
	attrDuration   = attribute.Key("sandcall.run.duration_ms")
	attrCaller     = attribute.Key("sandcall.call.caller")
	attrSeq        = attribute.Key("sandcall.call.seq")
	attrSource     = attribute.Key("sandcall.tool.source")
	attrDecision   = attribute.Key("sandcall.policy.decision")
	attrRule       = attribute.Key("sandcall.policy.rule")
	attrAttempts   = attribute.Key("sandcall.call.attempts")
	attrCallBytes  = attribute.Key("sandcall.call.result_bytes")
	attrAlias      = attribute.Key("sandcall.call.alias")
	attrApproval   = attribute.Key("sandcall.approval.outcome")
	attrWaitMS     = attribute.Key("sandcall.approval.wait_ms")
)

// startRunSpan starts the span of one run, the parent of its calls' spans:
// every tier hands the host a context derived from the one Execute got
// (the process tier brokers the worker's calls in this process), so the
// calls' spans are its children whatever the tier.
func (r *Runner) startRunSpan(ctx context.Context, id string, lang sandbox.Language) (context.Context, trace.Span) {
	if r.broker.tracer == nil {
		return ctx, nil
	}
	if lang == "" {
		lang = sandbox.JavaScript
	}
	return r.broker.tracer.Start(ctx, "run_code", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attrRunID.String(id), attrLanguage.String(safeName(string(lang))),
			attrTier.String(r.tier)))
}

// endRunSpan ends a run's span with its outcome.
func endRunSpan(sp trace.Span, res *sandbox.Result) {
	if sp == nil {
		return
	}
	sp.SetAttributes(attrCalls.Int(res.Calls.Total), attrDuration.Float64(res.DurationMS),
		attrResultSize.Int(max(len(res.Result), len(res.Whole))))
	if res.Error != nil {
		code := spanCode(res.Error.Code)
		sp.SetAttributes(attrErrorType.String(code))
		sp.SetStatus(codes.Error, code)
	}
	sp.End()
}

// callSpan is the span of one tool call; nil when tracing is off.
type callSpan struct{ sp trace.Span }

// startCallSpan starts the span of a call; the tool's name is set when the
// call ends, once the broker knows the tool (a guest's unknown name is
// never a span name).
func (r *run) startCallSpan(ctx context.Context, seq int) (context.Context, *callSpan) {
	if r.b.tracer == nil {
		return ctx, nil
	}
	ctx, sp := r.b.tracer.Start(ctx, "execute_tool", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attrOperation.String("execute_tool"), attrCaller.String(string(r.caller)),
			attrSeq.Int(seq)))
	return ctx, &callSpan{sp}
}

// end ends the call's span with the call's audit record (the attributes
// in one SetAttributes: each call of it may grow the span's slice).
func (c *callSpan) end(r *run, a auditCall) {
	if c == nil {
		return
	}
	sp := c.sp
	attrs := make([]attribute.KeyValue, 0, 9)
	if a.known {
		sp.SetName("execute_tool " + a.tool)
		attrs = append(attrs, attrToolName.String(a.tool))
		if t, ok := r.b.cfg.Catalog.Lookup(a.tool); ok {
			src := t.Source
			if src == "" {
				src = "builtin"
			}
			attrs = append(attrs, attrSource.String(src))
		}
	}
	attrs = append(attrs, attrDecision.String(a.decision), attrAttempts.Int(max(a.attempt, 1)),
		attrCallBytes.Int(a.resultBytes))
	if a.rule != "" {
		attrs = append(attrs, attrRule.String(a.rule))
	}
	if a.alias != "" {
		attrs = append(attrs, attrAlias.String(a.alias))
	}
	if a.err != nil {
		code := spanCode(a.err.Code)
		attrs = append(attrs, attrErrorType.String(code))
		sp.SetStatus(codes.Error, code)
	}
	sp.SetAttributes(attrs...)
	sp.End()
}

// spanCode is c for a span: one of sandcall's own codes, never text from
// elsewhere (a worker process reports its outcome's code, and a worker is
// not trusted): anything outside the closed set is E_INTERNAL.
func spanCode(c sandbox.Code) string {
	if !c.Valid() {
		return string(sandbox.EInternal)
	}
	return string(c)
}

// traceApproval records the wait for a person's answer as an event of the
// call's span: when it started, how long it took and how it ended.
func traceApproval(ctx context.Context, t0 time.Time, ok bool, err error, late bool) {
	sp := trace.SpanFromContext(ctx)
	if !sp.IsRecording() {
		return
	}
	outcome := "approved"
	switch {
	case late:
		outcome = "timeout"
	case err != nil:
		outcome = "error"
	case !ok:
		outcome = "declined"
	}
	sp.AddEvent("sandcall.approval", trace.WithTimestamp(t0),
		trace.WithAttributes(attrApproval.String(outcome), attrWaitMS.Float64(ms(time.Since(t0)))))
}
