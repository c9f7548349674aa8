package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/upstream/upstreamtest"
)

// httpConfig writes a .mcp.json naming url as the HTTP server "up" with an
// Authorization header from ${TOKEN}, and returns its root.
func httpConfig(t *testing.T, url string, extra map[string]any) string {
	t.Helper()
	root := t.TempDir()
	def := map[string]any{"type": "http", "url": url, "headers": map[string]any{"Authorization": "Bearer ${TOKEN}"}, "timeout": "10s"}
	for k, v := range extra {
		def[k] = v
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"up": def}})
	writeFile(t, filepath.Join(root, ".mcp.json"), string(cfg))
	return root
}

func loadUp(t *testing.T, root, token string) *Server {
	t.Helper()
	cfg := Load(LoadConfig{Root: root, LookupEnv: env(map[string]string{"TOKEN": token})})
	e, ok := cfg.Lookup("up")
	if !ok || e.Server == nil {
		t.Fatalf("server up: %+v (warnings %v)", e, cfg.Warnings)
	}
	return e.Server
}

func TestHTTPUpstreamAuth(t *testing.T) {
	ts := httptest.NewServer(upstreamtest.AuthHandler(upstreamtest.NewUpstream()))
	defer ts.Close()
	root := httpConfig(t, ts.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	for _, tc := range []struct {
		token string
		want  error
	}{
		{"wrong", ErrUnauthorized},
		{"", ErrUnauthorized},
		{upstreamtest.LimitedToken, ErrForbidden},
	} {
		c, err := Connect(ctx, loadUp(t, root, tc.token))
		if err == nil {
			c.Close()
			t.Errorf("token %q: connected", tc.token)
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("token %q: err = %v, want %v", tc.token, err, tc.want)
		}
		if strings.Contains(err.Error(), tc.token) && tc.token != "" {
			t.Errorf("token %q: the error shows the token: %v", tc.token, err)
		}
	}

	// The right token: the tool attaches and programs call it.
	cat, _ := tools.NewCatalog()
	set := Attach(ctx, cat, Options{Config: LoadConfig{Root: root, LookupEnv: env(map[string]string{"TOKEN": upstreamtest.GoodToken})}})
	defer set.Close()
	if len(set.Warnings()) > 0 {
		t.Fatalf("warnings: %v", set.Warnings())
	}
	res := runJS(t, cat, `const r = await tools.up_echo({msg: "hi"}); return r;`)
	if !res.OK || string(res.Result) != `{"echo":"hi","n":2}` {
		t.Fatalf("up_echo = ok %v %s %+v", res.OK, res.Result, res.Error)
	}
	res = runJS(t, cat, `try { await tools.up_echo({msg: "fail"}) } catch (e) { return e.code + ": " + e.message }`)
	if !res.OK || !strings.Contains(string(res.Result), "E_TOOL_FAILED") || !strings.Contains(string(res.Result), "echo refuses to fail") {
		t.Fatalf("isError upstream = %s %+v", res.Result, res.Error)
	}
}

// TestHTTPUpstreamTimeout: a server that does not answer in time fails
// with an error wrapping context.DeadlineExceeded.
func TestHTTPUpstreamTimeout(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	defer close(release)
	root := httpConfig(t, ts.URL, map[string]any{"timeout": 300})
	_, err := Connect(context.Background(), loadUp(t, root, upstreamtest.GoodToken))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline", err)
	}
}

// serveBroker serves broker's catalog as an MCP server (run_code with a
// JavaScript runner, and the direct tools) over an in-memory connection,
// and returns the client's side, closed when the test ends.
func serveBroker(ctx context.Context, t *testing.T, broker *bindings.Broker) *mcp.ClientSession {
	t.Helper()
	runner, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	go srv.Run(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestDirectCallerGetsUpstreamResult serves an upstream tool through
// sandcall's MCP server to a real go-sdk client: the direct caller gets the
// upstream's content blocks, structured content and isError unchanged, and
// the listed output schema is the upstream's own.
func TestDirectCallerGetsUpstreamResult(t *testing.T) {
	ts := httptest.NewServer(upstreamtest.AuthHandler(upstreamtest.NewUpstream()))
	defer ts.Close()
	root := httpConfig(t, ts.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, _ := tools.NewCatalog()
	set := Attach(ctx, cat, Options{Config: LoadConfig{Root: root, LookupEnv: env(map[string]string{"TOKEN": upstreamtest.GoodToken})}})
	defer set.Close()
	obs := &outcomes{}
	broker, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	cs := serveBroker(ctx, t, broker)

	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed *mcp.Tool
	for _, tl := range lt.Tools {
		if tl.Name == "up_echo" {
			listed = tl
		}
	}
	if listed == nil {
		t.Fatalf("up_echo not listed")
	}
	var gotSchema, wantSchema any
	b, _ := json.Marshal(listed.OutputSchema)
	_ = json.Unmarshal(b, &gotSchema)
	b, _ = json.Marshal(upstreamtest.EchoOutput)
	_ = json.Unmarshal(b, &wantSchema)
	if !reflect.DeepEqual(gotSchema, wantSchema) {
		t.Errorf("output schema = %s, want the upstream's %s", mustJSON(gotSchema), mustJSON(wantSchema))
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_echo", Arguments: map[string]any{"msg": "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	want := upstreamtest.EchoResult("hello")
	if mustJSON(res.Content) != mustJSON(want.Content) || mustJSON(res.StructuredContent) != mustJSON(want.StructuredContent) || res.IsError {
		t.Errorf("direct result = %s\nwant the upstream's %s", mustJSON(res), mustJSON(want))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_echo", Arguments: map[string]any{"msg": "fail"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "echo refuses to fail" {
		t.Errorf("direct isError result = %s", mustJSON(res))
	}
	// Served as is, but counted (and audited) as a failed call.
	if got := obs.list(); mustJSON(got) != `["direct up_echo ok","direct up_echo failed"]` {
		t.Errorf("call outcomes = %v, want the isError call counted as failed", got)
	}
	// A program still gets the plain value.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `return (await tools.up_echo({msg: "abc"})).n`}})
	if err != nil {
		t.Fatal(err)
	}
	if out := res.StructuredContent.(map[string]any); out["ok"] != true || out["result"] != float64(3) {
		t.Errorf("run_code = %s", mustJSON(res.StructuredContent))
	}
}

// outcomes is a bindings.Observer that records each call's outcome.
type outcomes struct {
	mu  sync.Mutex
	got []string
}

func (o *outcomes) ObserveCall(tool, caller, outcome string, _ time.Duration) {
	o.mu.Lock()
	o.got = append(o.got, caller+" "+tool+" "+outcome)
	o.mu.Unlock()
}

func (o *outcomes) ObserveRun(string, string, time.Duration) {}

func (o *outcomes) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.got...)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// TestRetryFirstConnection starts with the upstream down: the server is
// retried in the background and its tool appears, callable, once the
// upstream comes up.
func TestRetryFirstConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there until later
	root := httpConfig(t, "http://"+addr+"/mcp", nil)
	cat, _ := tools.NewCatalog()
	added := make(chan struct{}, 1)
	cat.OnChange(func() {
		select {
		case added <- struct{}{}:
		default:
		}
	})
	set := Attach(context.Background(), cat, Options{Config: LoadConfig{Root: root, LookupEnv: env(map[string]string{"TOKEN": upstreamtest.GoodToken})},
		ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond})
	defer set.Close()
	if _, ok := cat.Lookup("up_echo"); ok {
		t.Fatal("up_echo present while the upstream is down")
	}
	if w := strings.Join(set.Warnings(), "\n"); !strings.Contains(w, `Failed to connect to "up"`) || !strings.Contains(w, "retrying") {
		t.Fatalf("warnings = %s", w)
	}

	l2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	ts := upstreamtest.ServeOn(l2)
	t.Cleanup(ts.Close) // after set.Close: the client's open stream would keep Close waiting
	deadline := time.After(20 * time.Second)
	for {
		if _, ok := cat.Lookup("up_echo"); ok {
			break
		}
		select {
		case <-added:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("up_echo not added within 20s; tools %v", set.Tools())
		}
	}
	res := runJS(t, cat, `return (await tools.up_echo({msg: "back"})).echo`)
	if !res.OK || string(res.Result) != `"back"` {
		t.Fatalf("up_echo = %s %+v", res.Result, res.Error)
	}
}

// TestRefreshInPlace calls a tool from several goroutines while its server
// adds and removes another tool (each change a tools/list_changed) and the
// set re-lists over and over: the tool that stays is never unknown.
func TestRefreshInPlace(t *testing.T) {
	up := upstreamtest.NewUpstream()
	ts := httptest.NewServer(upstreamtest.AuthHandler(up))
	defer ts.Close()
	root := httpConfig(t, ts.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, _ := tools.NewCatalog()
	set := Attach(ctx, cat, Options{Config: LoadConfig{Root: root, LookupEnv: env(map[string]string{"TOKEN": upstreamtest.GoodToken})}})
	defer set.Close()
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	var changes atomic.Int64
	cat.OnChange(func() { changes.Add(1) })

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var calls, unknown atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := b.Direct(ctx, bindings.DirectCall{Principal: bindings.LocalPrincipal, Tool: "up_echo", Args: json.RawMessage(`{"msg":"x"}`)})
				calls.Add(1)
				if se := sandbox.AsError(err, ""); err != nil && se.Code == sandbox.EToolUnknown {
					unknown.Add(1)
				} else if err != nil {
					t.Errorf("call: %v", err)
				}
			}
		}()
	}
	// Lookups are cheap, so these see even a short gap.
	var missing atomic.Int64
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, ok := cat.Lookup("up_echo"); !ok {
					missing.Add(1)
				}
			}
		}()
	}
	extra := &mcp.Tool{Name: "extra", Description: "Comes and goes.", InputSchema: &jsonschema.Schema{Type: "object"}}
	for i := range 50 {
		if i%2 == 0 {
			up.AddTool(extra, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		} else {
			up.RemoveTools("extra")
		}
		set.Refresh(ctx)
	}
	close(stop)
	wg.Wait()
	if missing.Load() > 0 {
		t.Fatalf("up_echo missing from the catalog in %d lookups during refreshes", missing.Load())
	}
	if unknown.Load() > 0 {
		t.Fatalf("%d of %d calls got E_TOOL_UNKNOWN during refreshes", unknown.Load(), calls.Load())
	}
	if calls.Load() == 0 || changes.Load() == 0 {
		t.Fatalf("calls %d, catalog changes %d: the test exercised nothing", calls.Load(), changes.Load())
	}
	if _, ok := cat.Lookup("up_echo"); !ok {
		t.Fatal("up_echo gone")
	}
}

// BenchmarkHTTPUpstreamCall measures one call of an HTTP upstream's tool:
// "direct" through the broker as a direct MCP caller (the upstream's result
// re-encoded as is), "program-value" the tool's handler alone, which
// unwraps the value as a program gets it (no broker, no engine).
func BenchmarkHTTPUpstreamCall(b *testing.B) {
	ts := httptest.NewServer(upstreamtest.AuthHandler(upstreamtest.NewUpstream()))
	defer ts.Close()
	root := b.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"up": map[string]any{
		"type": "http", "url": ts.URL, "headers": map[string]any{"Authorization": "Bearer " + upstreamtest.GoodToken}}}})
	if err := os.WriteFile(filepath.Join(root, ".mcp.json"), cfg, 0o644); err != nil {
		b.Fatal(err)
	}
	cat, _ := tools.NewCatalog()
	set := Attach(context.Background(), cat, Options{Config: LoadConfig{Root: root}})
	defer set.Close()
	br, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"msg":"hello"}`)
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := br.Direct(context.Background(), bindings.DirectCall{Principal: bindings.LocalPrincipal, Tool: "up_echo", Args: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
	tl, ok := cat.Lookup("up_echo")
	if !ok {
		b.Fatal("up_echo missing")
	}
	b.Run("program-value", func(b *testing.B) {
		for b.Loop() {
			if _, err := tl.Handler(context.Background(), args); err != nil {
				b.Fatal(err)
			}
		}
	})
}
