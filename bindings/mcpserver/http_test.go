package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

func newHTTP(t *testing.T, o options) (*httptest.Server, *auditLog) {
	t.Helper()
	srv, _, audit := newServer(t, o)
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts, audit
}

func connectHTTP(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestHTTPRunCode(t *testing.T) {
	ts, _ := newHTTP(t, options{})
	cs := connectHTTP(t, ts.URL+"/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": expense.Program}})
	if err != nil || res.IsError {
		t.Fatalf("run_code: %v %v", err, res)
	}
	var text struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(textJSON(t, res), &text); err != nil || !bytes.Equal(text.Result, expense.ReferenceSummary()) {
		t.Fatalf("result differs from the reference (%v): %s", err, text.Result)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_budget_by_level", Arguments: map[string]any{"level": "L9"}})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, res, sandbox.EToolArgs)
}

func TestHTTPCancel(t *testing.T) {
	started := make(chan struct{}, 1)
	ts, audit := newHTTP(t, options{extra: []*tools.Tool{blocker(started)}})
	cs := connectHTTP(t, ts.URL+"/mcp")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `await tools.block({})`}})
		errc <- err
	}()
	<-started
	cancel() // the client sends notifications/cancelled
	if err := <-errc; err == nil {
		t.Fatal("no error after cancel")
	}
	if rec := audit.waitRun(t); rec["code"] != string(sandbox.ECancelled) {
		t.Fatalf("run ended with %v, want E_CANCELLED", rec["code"])
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{"n": 1}})
	if err != nil || res.IsError {
		t.Fatalf("ping after cancel: %v %v", err, res)
	}
}

// TestHTTPDisconnect drops the HTTP request that carries a call, without
// notifications/cancelled: the run must stop too.
func TestHTTPDisconnect(t *testing.T) {
	started := make(chan struct{}, 1)
	ts, audit := newHTTP(t, options{extra: []*tools.Tool{blocker(started)}})
	sid := rawInitialize(t, ts.URL+"/mcp")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"await tools.block({})"}}}`
	req := rawRequest(t, ctx, ts.URL+"/mcp", body, sid)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	cancel() // the client goes away
	<-errc
	if rec := audit.waitRun(t); rec["code"] != string(sandbox.ECancelled) {
		t.Fatalf("run ended with %v, want E_CANCELLED", rec["code"])
	}
}

func TestHTTPGuards(t *testing.T) {
	ts, _ := newHTTP(t, options{origins: []string{"https://app.example"}})
	url := ts.URL + "/mcp"
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	cases := []struct {
		name   string
		mutate func(*http.Request)
		body   string
		want   int
	}{
		{"plain", nil, init, http.StatusOK},
		{"same origin", func(r *http.Request) { r.Header.Set("Origin", "http://"+r.URL.Host) }, init, http.StatusOK},
		{"allowed origin", func(r *http.Request) { r.Header.Set("Origin", "https://app.example") }, init, http.StatusOK},
		{"foreign origin", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, init, http.StatusForbidden},
		{"null origin", func(r *http.Request) { r.Header.Set("Origin", "null") }, init, http.StatusForbidden},
		{"cross-site fetch", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }, init, http.StatusForbidden},
		{"rebinding host", func(r *http.Request) { r.Host = "evil.example" }, init, http.StatusForbidden},
		{"oversized body", nil, init[:len(init)-1] + `,"pad":"` + strings.Repeat("x", 23<<20) + `"}`, http.StatusRequestEntityTooLarge},
		{"oversized chunked body", func(r *http.Request) { r.ContentLength = -1 }, init[:len(init)-1] + `,"pad":"` + strings.Repeat("x", 23<<20) + `"}`, http.StatusRequestEntityTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := rawRequest(t, context.Background(), url, c.body, "")
			if c.mutate != nil {
				c.mutate(req)
			}
			if c.name == "oversized chunked body" {
				req.Body = io.NopCloser(strings.NewReader(c.body)) // no length: sent chunked
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			if resp.StatusCode != c.want {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, msg, c.want)
			}
		})
	}
	resp, err := http.Get(ts.URL + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /other: %d, want 404", resp.StatusCode)
	}
}

func rawRequest(t *testing.T, ctx context.Context, url, body, sid string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return req
}

// rawInitialize opens a session by hand and returns its id.
func rawInitialize(t *testing.T, url string) string {
	t.Helper()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	resp, err := http.DefaultClient.Do(rawRequest(t, context.Background(), url, init, ""))
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "data:") {
	}
	resp.Body.Close()
	if sid == "" || resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	resp, err = http.DefaultClient.Do(rawRequest(t, context.Background(), url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}
	return sid
}
