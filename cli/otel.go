package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandcall/sandcall/cli/config"
)

// Bounds of the exporter: one export attempt, the retries of one batch,
// and the flush at shutdown. A collector that is down costs at most these,
// in the background: spans are queued and dropped when the queue is full,
// never waited for by a request.
const (
	traceExportTimeout = 5 * time.Second
	traceRetryFor      = 10 * time.Second
	traceShutdown      = 5 * time.Second
)

// registerTracing registers --otlp-endpoint.
func registerTracing(fs *flag.FlagSet) *string {
	return fs.String("otlp-endpoint", "", "switch tracing on: export OpenTelemetry spans over OTLP/HTTP to URL "+
		"(e.g. http://127.0.0.1:4318; /v1/traces is added to a URL without a path); see tracing in sandcall.yaml")
}

// setupTracing starts the tracer provider when tracing is switched on
// (flagEndpoint, or cfg) and makes it and the W3C propagator global (the
// upstream clients use them). Off, it returns a nil provider and a no-op
// stop, and nothing is started. stop flushes the spans still queued,
// within traceShutdown.
func setupTracing(ctx context.Context, stderr io.Writer, cfg config.Tracing, flagEndpoint string, log *slog.Logger) (tp trace.TracerProvider, stop func(), err error) {
	stop = func() {}
	if flagEndpoint == "" && cfg.OTLPEndpoint == "" && !cfg.Enabled {
		return nil, stop, nil
	}
	if p := cfg.Protocol; p != "" && p != "http/protobuf" {
		return nil, stop, fmt.Errorf("tracing.protocol %q: only http/protobuf is built in", p)
	}
	if r := cfg.SampleRatio; r != nil && (*r < 0 || *r > 1) {
		return nil, stop, fmt.Errorf("tracing.sample_ratio %v: want a number from 0 to 1", *r)
	}
	endpoint, err := traceEndpoint(flagEndpoint, cfg.OTLPEndpoint)
	if err != nil {
		return nil, stop, err
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := os.Getenv(k); v != "" && v != "http/protobuf" {
			fmt.Fprintf(stderr, "warning: %s=%s ignored: sandcall exports traces over OTLP/HTTP (http/protobuf) only\n", k, v)
			break
		}
	}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(endpoint),
		otlptracehttp.WithTimeout(traceExportTimeout),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond,
			MaxInterval: 2 * time.Second, MaxElapsedTime: traceRetryFor}),
	}
	if len(cfg.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, stop, fmt.Errorf("tracing: %v", err)
	}
	// service.name and service.version first: OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES, read after them, win.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "sandcall"), attribute.String("service.version", version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv())
	if err != nil && res == nil {
		return nil, stop, fmt.Errorf("tracing: resource: %v", err)
	}
	popts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	if r := cfg.SampleRatio; r != nil {
		popts = append(popts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(*r))))
	}
	sdk := sdktrace.NewTracerProvider(popts...)
	otel.SetTracerProvider(sdk)
	// W3C Trace Context only, and traceparent alone: Baggage and
	// tracestate would carry what a client put in them to every upstream
	// server, a channel past the policy. (The server's spans drop a
	// client's tracestate too: mcpserver.TraceMiddleware.)
	otel.SetTextMapPropagator(traceParentOnly{})
	otel.SetErrorHandler(&traceErrors{log: log})
	fmt.Fprintf(stderr, "tracing on: OTLP/HTTP to %s\n", endpoint)
	stop = func() {
		sctx, cancel := context.WithTimeout(context.Background(), traceShutdown)
		defer cancel()
		if err := sdk.Shutdown(sctx); err != nil {
			log.Warn("tracing: flushing spans at shutdown", "err", err)
		}
	}
	return sdk, stop, nil
}

// traceEndpoint resolves the collector URL: the flag, the config file,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (as is), OTEL_EXPORTER_OTLP_ENDPOINT
// (a base: /v1/traces appended), or http://localhost:4318/v1/traces. A
// URL of the flag or the file without a path gets /v1/traces.
func traceEndpoint(flagURL, fileURL string) (string, error) {
	var raw, what string
	base := false
	switch {
	case flagURL != "":
		raw, what = flagURL, "--otlp-endpoint"
	case fileURL != "":
		raw, what = fileURL, "tracing.otlp_endpoint"
	case os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		raw, what = os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	case os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		raw, what, base = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "OTEL_EXPORTER_OTLP_ENDPOINT", true
	default:
		return "http://localhost:4318/v1/traces", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s: want an http:// or https:// URL, such as http://127.0.0.1:4318", what)
	}
	if u.User != nil || u.RawQuery != "" {
		return "", fmt.Errorf("%s: no user info or query in the URL: put credentials in tracing.headers or OTEL_EXPORTER_OTLP_HEADERS", what)
	}
	switch {
	case base:
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	case u.Path == "" || u.Path == "/":
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// traceErrors sends the SDK's errors (a collector that is down) to the log,
// at most one a minute: a dead collector must not flood stderr.
type traceErrors struct {
	log  *slog.Logger
	mu   sync.Mutex
	last time.Time
	n    int
}

func (h *traceErrors) Handle(err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	h.mu.Lock()
	now := time.Now()
	if now.Sub(h.last) < time.Minute {
		h.n++
		h.mu.Unlock()
		return
	}
	skipped := h.n
	h.last, h.n = now, 0
	h.mu.Unlock()
	h.log.Warn("tracing: exporting spans failed (spans are dropped, requests go on)", "err", err.Error(), "similar_errors_skipped", skipped)
}

// traceParentOnly is W3C Trace Context that injects traceparent alone,
// never tracestate: what sandcall sends its upstream servers.
type traceParentOnly struct{ propagation.TraceContext }

// Inject implements propagation.TextMapPropagator.
func (p traceParentOnly) Inject(ctx context.Context, carrier propagation.TextMapCarrier) {
	sc := trace.SpanContextFromContext(ctx)
	if sc.TraceState().Len() > 0 {
		ctx = trace.ContextWithSpanContext(ctx, sc.WithTraceState(trace.TraceState{}))
	}
	p.TraceContext.Inject(ctx, carrier)
}
