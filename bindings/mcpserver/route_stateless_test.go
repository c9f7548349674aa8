package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// meta2026 is the per-request _meta of protocol 2026-07-28.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// statelessRequest is a POST of protocol 2026-07-28: no session, the
// version header, and the version again in params._meta.
func statelessRequest(t *testing.T, ctx context.Context, url, body string) *http.Request {
	t.Helper()
	req := rawRequest(t, ctx, url, body, "")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(body), &m); err == nil {
		req.Header.Set("Mcp-Method", m.Method)
		if m.Params.Name != "" {
			req.Header.Set("Mcp-Name", m.Params.Name)
		}
	}
	return req
}

// TestHTTPBothGenerations: the go-sdk client's default (2026-07-28, via
// server/discover) is served without a session; a 2025-11-25 client still
// gets initialize and a session. Both run programs.
func TestHTTPBothGenerations(t *testing.T) {
	ts, _ := newHTTP(t, options{})
	for _, proto := range []string{"", "2025-11-25"} {
		t.Run("proto="+proto, func(t *testing.T) {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
				Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: proto})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			got := cs.InitializeResult().ProtocolVersion
			if proto == "" {
				if got != "2026-07-28" || cs.ID() != "" {
					t.Fatalf("default client: version %q session %q, want 2026-07-28 without a session", got, cs.ID())
				}
			} else if got != proto || cs.ID() == "" {
				t.Fatalf("%s client: version %q session %q, want a session", proto, got, cs.ID())
			}
			lt, err := cs.ListTools(context.Background(), nil)
			if err != nil || len(lt.Tools) == 0 {
				t.Fatalf("tools/list: %v %v", err, lt)
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `return (await tools.ping({n: 41}))`}})
			if err != nil || res.IsError {
				t.Fatalf("run_code: %v %s", err, textJSON(t, res))
			}
		})
	}
}

// TestStatelessToolsListCacheable: a 2026-07-28 tools/list says how long it
// may be cached, and by whom (SEP-2549).
func TestStatelessToolsListCacheable(t *testing.T) {
	ts, _ := newHTTP(t, options{})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta2026 + `}}`
	msg := firstMessage(t, statelessRequest(t, context.Background(), ts.URL+"/mcp", body))
	var r struct {
		Result struct {
			TTLMs      int    `json:"ttlMs"`
			CacheScope string `json:"cacheScope"`
			Tools      []any  `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &r); err != nil || len(r.Result.Tools) == 0 {
		t.Fatalf("tools/list: %v %s", err, msg)
	}
	if r.Result.TTLMs != 60000 || r.Result.CacheScope != "public" {
		t.Fatalf("tools/list cache hints: ttlMs %d scope %q, want 60000 public", r.Result.TTLMs, r.Result.CacheScope)
	}
}

// TestStatelessHeaders: requests of 2026-07-28 are checked against their
// headers: the version in _meta is required and must match the
// MCP-Protocol-Version header, and Mcp-Method must match the body.
func TestStatelessHeaders(t *testing.T) {
	ts, _ := newHTTP(t, options{})
	url := ts.URL + "/mcp"
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta2026 + `}}`
	cases := []struct {
		name   string
		body   string
		mutate func(*http.Request)
		want   int
	}{
		{"valid", list, nil, http.StatusOK},
		{"no _meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, nil, http.StatusBadRequest},
		{"version mismatch", strings.Replace(list, `"2026-07-28"`, `"2025-11-25"`, 1), nil, http.StatusBadRequest},
		{"method header mismatch", list, func(r *http.Request) { r.Header.Set("Mcp-Method", "tools/call") }, http.StatusBadRequest},
		{"no method header", list, func(r *http.Request) { r.Header.Del("Mcp-Method") }, http.StatusBadRequest},
		{"unknown version", list, func(r *http.Request) { r.Header.Set("Mcp-Protocol-Version", "2099-01-01") }, http.StatusBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := statelessRequest(t, context.Background(), url, c.body)
			if c.mutate != nil {
				c.mutate(req)
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
}

// TestStatelessDisconnect: a 2026-07-28 client cancels by closing the
// response stream; the run ends E_CANCELLED and the next request is served.
func TestStatelessDisconnect(t *testing.T) {
	started := make(chan struct{}, 1)
	ts, audit := newHTTP(t, options{extra: []*tools.Tool{blocker(started)}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"await tools.block({})"},` + meta2026 + `}}`
	req := statelessRequest(t, ctx, ts.URL+"/mcp", body)
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
	cancel() // the client closes the stream
	<-errc
	if rec := audit.waitRun(t); rec["code"] != string(sandbox.ECancelled) {
		t.Fatalf("run ended with %v, want E_CANCELLED", rec["code"])
	}
	ping := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"return 1"},` + meta2026 + `}}`
	msg := firstMessage(t, statelessRequest(t, context.Background(), ts.URL+"/mcp", ping))
	if !strings.Contains(string(msg), `"ok":true`) {
		t.Fatalf("next run: %s", msg)
	}
}

// TestStatelessProgress: progress notifications of a 2026-07-28 call come
// on the call's own response stream, before its result.
func TestStatelessProgress(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	gate := &tools.Tool{Name: "gate", Description: "Waits for the test.",
		Handler: func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			started <- struct{}{}
			select {
			case <-release:
				return json.RawMessage(`1`), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
	ts, _ := newHTTP(t, options{extra: []*tools.Tool{gate}, progress: time.Millisecond})
	meta := strings.Replace(meta2026, `"_meta":{`, `"_meta":{"progressToken":"p1",`, 1)
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"return await tools.gate({})"},` + meta + `}}`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := http.DefaultClient.Do(statelessRequest(t, ctx, ts.URL+"/mcp", body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var progress int
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var m struct {
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		switch {
		case m.Method == "notifications/progress":
			if progress++; progress == 1 {
				close(release)
			}
		case m.Result != nil:
			if progress == 0 {
				t.Fatal("result before any progress notification")
			}
			if !strings.Contains(string(m.Result), `"ok":true`) {
				t.Fatalf("result %s", m.Result)
			}
			return
		}
	}
	t.Fatalf("stream ended without a result (%v)", sc.Err())
}

// firstMessage sends req and returns the first JSON-RPC message of its
// response (JSON body or first SSE data line).
func firstMessage(t *testing.T, req *http.Request) json.RawMessage {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			return json.RawMessage(strings.TrimSpace(data))
		}
	}
	t.Fatalf("no message in the response (%v)", sc.Err())
	return nil
}
