package cli

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// TestTracingHostileUpstream: a client sends a tracestate, and an upstream
// answers a call with an error whose text mimics sandcall's JSON error
// (its "code" an instruction). Through the binary: the upstream never
// receives the client's tracestate (header or _meta), and no exported span
// carries the upstream's text — the server span of the direct call names
// sandcall's own code, E_TOOL_FAILED.
func TestTracingHostileUpstream(t *testing.T) {
	t.Parallel()
	col := newOTLPCollector(t)
	up := newTracedUpstream(t)
	dir := t.TempDir()
	writeServers(t, dir, map[string]any{"type": "http", "url": up.URL, "timeout": "30s"})
	url, cmd, stderr := serveTraced(t, dir, nil, "--otlp-endpoint", col.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	waitUpEcho(t, ctx, url, stderr, func() string { return "" })
	h := http.Header{}
	h.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.Set("tracestate", "vendor=s3cr3t-state")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: traceHeaderTransport{h}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_fail", Arguments: map[string]any{},
		Meta: mcp.Meta{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "vendor=s3cr3t-meta"}})
	if err != nil || !res.IsError {
		t.Fatalf("direct up_fail: %v %v", err, res)
	}
	run, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"code": `await tools.up_echo({msg: "hi"}); return await tools.up_fail({});`}})
	if err != nil || !run.IsError {
		t.Fatalf("run_code calling up_fail: %v %v", err, run)
	}
	cs.Close()
	stopTracedServe(t, cmd, stderr)

	up.mu.Lock()
	states := append([]string(nil), up.states...)
	up.mu.Unlock()
	if len(states) > 0 {
		t.Errorf("the client's tracestate reached the upstream: %q", states)
	}
	_, spans := col.snapshot()
	var direct *otlpSpan
	for i, s := range spans {
		texts := []string{s.Name, s.Status.GetMessage()}
		for _, v := range s.attrs {
			texts = append(texts, v)
		}
		for _, ev := range s.Events {
			texts = append(texts, ev.Name)
			for _, v := range otlpAttrMap(ev.Attributes) {
				texts = append(texts, v)
			}
		}
		for _, txt := range texts {
			if strings.Contains(txt, "PWNED") || strings.Contains(txt, "evil.example") {
				t.Errorf("span %q carries the upstream's text: %q", s.Name, txt)
			}
		}
		if s.Name == "tools/call up_fail" && s.Kind == tracepb.Span_SPAN_KIND_SERVER {
			direct = &spans[i]
		}
	}
	if direct == nil {
		t.Fatalf("no server span for the direct up_fail call")
	}
	if direct.Status.GetMessage() != "E_TOOL_FAILED" || direct.attrs["sandcall.error.code"] != "E_TOOL_FAILED" {
		t.Errorf("direct up_fail span: status %q, sandcall.error.code %q; want sandcall's E_TOOL_FAILED",
			direct.Status.GetMessage(), direct.attrs["sandcall.error.code"])
	}
}
