package mcpserver_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
	"github.com/sandcall/sandcall/bindings/mcpserver/jwttest"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// TestHTTPTokens: bearer tokens pick the principal; a missing or wrong
// token is 401 with a challenge; /metrics needs a token too.
func TestHTTPTokens(t *testing.T) {
	cat, err := tools.NewCatalog(demo.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	m := mcpserver.NewMetrics()
	broker, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat, Authorizer: hideFrom{mustPolicy(t, financeOnly), "eddie"}, Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Metrics: m, Logger: slog.New(slog.DiscardHandler), Tokens: []bearer.Token{
		{SHA256: bearer.HashToken("fin-token"), Principal: bindings.Principal{ID: "fiona", Roles: []string{"finance"}}},
		{SHA256: bearer.HashToken("eng-token"), Principal: bindings.Principal{ID: "eddie", Roles: []string{"eng"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestHTTPServer(t, srv.HTTPHandler())
	for _, tok := range []string{"", "wrong"} {
		resp, _ := jwttest.Post(t, ts.URL+"/mcp", tok)
		if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("token %q: %d %q", tok, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	fin := connectBearer(t, ts.URL+"/mcp", "fin-token")
	eng := connectBearer(t, ts.URL+"/mcp", "eng-token")
	call := func(cs *mcp.ClientSession) *mcp.CallToolResult {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code",
			Arguments: map[string]any{"code": `try { return await tools.ping({n: 1}) } catch (e) { return e.code }`}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if got := decodeStructured[sandbox.Result](t, call(fin)).Result; string(got) != "2" {
		t.Errorf("finance: %s", got)
	}
	if got := decodeStructured[sandbox.Result](t, call(eng)).Result; string(got) != `"E_TOOL_DENIED"` {
		t.Errorf("eng: %s", got)
	}
	// Listing follows the principal: the authorizer hides ping from eddie.
	has := func(cs *mcp.ClientSession) bool {
		lr, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range lr.Tools {
			if tl.Name == "ping" {
				return true
			}
		}
		return false
	}
	if !has(fin) || has(eng) {
		t.Errorf("ping listed for fiona %v, for eddie %v", has(fin), has(eng))
	}
	// /metrics: 401 without a token; the counters with one.
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("/metrics without a token: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", ts.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer fin-token")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`sandcall_tool_calls_total{caller="code",outcome="ok",tool="ping"} 1`,
		`sandcall_tool_calls_total{caller="code",outcome="denied",tool="ping"} 1`,
		`sandcall_runs_total{code="",outcome="ok"} 2`,
		`sandcall_tool_call_duration_seconds_count{tool="ping"} 2`,
		`sandcall_run_duration_seconds_count 2`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
}

func connectBearer(t *testing.T, url, tok string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearerRT{tok}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type bearerRT struct{ tok string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// hideFrom is an Authorizer that does not expose ping to one principal.
type hideFrom struct {
	bindings.Authorizer
	id string
}

func (h hideFrom) Exposes(t *tools.Tool, c tools.Caller, p bindings.Principal) bool {
	if t.Name == "ping" && p.ID == h.id && c == tools.Direct {
		return false
	}
	return h.Authorizer.Exposes(t, c, p)
}

func newTestHTTPServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts
}
