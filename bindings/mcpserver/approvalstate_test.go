package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/store/storetest"
	"github.com/sandcall/sandcall/tools"
)

const approvePay = `version: 1
rules:
  - name: ask-pay
    tools: [pay]
    require_approval: true
`

// sideEffects are two side-effecting tools that count the calls they
// served: count (free) and pay (needs an approval).
type sideEffects struct{ counts, pays atomic.Int64 }

// check reports whether the tools were called counts times and paid pays
// times; if not, it marks the test failed with what said first.
func (s *sideEffects) check(t *testing.T, what string, counts, pays int64) bool {
	t.Helper()
	c, p := s.counts.Load(), s.pays.Load()
	if c != counts || p != pays {
		t.Errorf("%s%d counts, %d pays; want %d and %d", what, c, p, counts, pays)
		return false
	}
	return true
}

func (s *sideEffects) tools() []*tools.Tool {
	open := &jsonschema.Schema{Type: "object"}
	return []*tools.Tool{
		{Name: "count", Description: "Counts its calls.", InputSchema: open,
			Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(fmt.Sprintf(`{"call":%d}`, s.counts.Add(1))), nil
			}},
		{Name: "pay", Description: "Pays.", InputSchema: open,
			Handler: func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
				s.pays.Add(1)
				return args, nil
			}},
	}
}

// payProgram calls count, then pay (asked about) with a random number and
// the time in its arguments, then count again.
const payProgram = `const a = await tools.count({n: 1});
	const p = await tools.pay({amount: 5, r: Math.random(), at: Date.now()});
	const b = await tools.count({n: 2});
	return [a.call, p.amount, b.call]`

// TestApprovalWithoutSession: over HTTP on protocol 2026-07-28 (the go-sdk
// client, which answers input-required results itself), a run that needs
// an approval returns input-required; the client asks its person and
// calls again with the answer and the request state; the run resumes by
// replay and each side effect happens exactly once.
func TestApprovalWithoutSession(t *testing.T) {
	for _, accept := range []bool{true, false} {
		t.Run(fmt.Sprint("accept=", accept), func(t *testing.T) {
			var se sideEffects
			ts, _ := newHTTP(t, options{auth: mustPolicy(t, approvePay), extra: se.tools()})
			var asked atomic.Int64
			var message atomic.Value
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					message.Store(req.Params.Message)
					// The first call has run up to pay: count ran once.
					se.check(t, "while asking: ", 1, 0)
					if accept {
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
					}
					return &mcp.ElicitResult{Action: "decline"}, nil
				}}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("protocol %q", v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": payProgram}})
			if err != nil {
				t.Fatal(err)
			}
			out := decodeStructured[runResult](t, res)
			if asked.Load() != 1 || !strings.Contains(message.Load().(string), "pay") {
				t.Errorf("asked %d times: %v", asked.Load(), message.Load())
			}
			if accept {
				if !out.OK || string(out.Result) != `[1,5,2]` {
					t.Fatalf("approved run: %s", textJSON(t, res))
				}
				se.check(t, "", 2, 1)
			} else {
				if out.OK || out.Error.Code != sandbox.EToolDenied || !strings.Contains(out.Error.Message, "declined") {
					t.Fatalf("declined run: %s", textJSON(t, res))
				}
				se.check(t, "", 1, 0)
			}
		})
	}
}

// TestApprovalStateChecked: the input-required result as a client sees it
// (the go-sdk's automatic answer turned off); a request state altered, or
// sent with another program, or without the answer is refused with
// E_TOOL_ARGS and nothing runs again.
func TestApprovalStateChecked(t *testing.T) {
	var se sideEffects
	ts, _ := newHTTP(t, options{auth: mustPolicy(t, approvePay), extra: se.tools()})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		}}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := map[string]any{"code": payProgram}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || res.RequestState == "" || len(res.InputRequests) != 1 {
		t.Fatalf("want input required: %+v", res)
	}
	t.Logf("request state: %d bytes", len(res.RequestState))
	var id string
	for k, v := range res.InputRequests {
		id = k
		if e, ok := v.(*mcp.ElicitParams); !ok || !strings.Contains(e.Message, "pay") {
			t.Fatalf("input request %T %+v", v, v)
		}
	}
	if strings.Contains(res.RequestState, "count") || strings.Contains(res.RequestState, "call") {
		t.Errorf("the request state is readable: %s", res.RequestState)
	}
	yes := mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept"}}
	st := []byte(res.RequestState)
	st[len(st)/2] ^= 1
	for name, p := range map[string]*mcp.CallToolParams{
		"altered":   {Name: "run_code", Arguments: args, InputResponses: yes, RequestState: string(st)},
		"program":   {Name: "run_code", Arguments: map[string]any{"code": payProgram + ";"}, InputResponses: yes, RequestState: res.RequestState},
		"no answer": {Name: "run_code", Arguments: args, RequestState: res.RequestState},
	} {
		r, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if e := wantCode(t, r, sandbox.EToolArgs); e.Hint == "" {
			t.Errorf("%s: %+v", name, e)
		}
	}
	if !se.check(t, "", 1, 0) {
		t.FailNow()
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args, InputResponses: yes, RequestState: res.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	if out := decodeStructured[runResult](t, r); !out.OK || string(out.Result) != `[1,5,2]` {
		t.Fatalf("resumed: %s", textJSON(t, r))
	}
	se.check(t, "", 2, 1)
}

// TestApprovalStateExpires: an answer after approval_timeout is denied
// (E_TOOL_DENIED), and the pending call is not made.
func TestApprovalStateExpires(t *testing.T) {
	var se sideEffects
	runner := newPipeline(t, bindings.BrokerConfig{Authorizer: mustPolicy(t, approvePay),
		ApprovalTimeout: time.Nanosecond}, // expired by the time anyone answers
		bindings.RunnerConfig{}, se.tools()...)
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.HTTPHandler())
	defer ts.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		}}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": payProgram}})
	if err != nil {
		t.Fatal(err)
	}
	if e := wantCode(t, res, sandbox.EToolDenied); !strings.Contains(e.Message, "approval timeout") || e.Tool != "pay" {
		t.Errorf("expired: %+v", e)
	}
	se.check(t, "", 1, 0)
}

// TestApprovalSharedKey: two replicas sharing a real redis-server seal
// and open each other's request states (one key, created with SET NX);
// with Redis down, a replica that never read the key refuses the run
// before it makes any call (E_INTERNAL with a hint naming the store), and
// works again once Redis is back.
func TestApprovalSharedKey(t *testing.T) {
	r := storetest.StartRedis(t)
	st, err := store.Open(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var se sideEffects
	replicaURL := func() string {
		runner := newPipeline(t, bindings.BrokerConfig{Authorizer: mustPolicy(t, approvePay), Shared: st}, bindings.RunnerConfig{}, se.tools()...)
		srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Store: st})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv.HTTPHandler())
		t.Cleanup(ts.Close)
		return ts.URL + "/mcp"
	}
	manual := func(url string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := map[string]any{"code": payProgram}
	a, b := manual(replicaURL()), manual(replicaURL())
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil || !res.NeedsInput() {
		t.Fatalf("replica a: %v %+v", err, res)
	}
	res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args,
		InputResponses: mcp.InputResponseMap{"sandcall_approval": &mcp.ElicitResult{Action: "accept"}}, RequestState: res.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	if out := decodeStructured[runResult](t, res); !out.OK || string(out.Result) != `[1,5,2]` {
		t.Fatalf("answered through replica b: %s", textJSON(t, res))
	}

	r.Stop()
	c := manual(replicaURL())
	res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if e := wantCode(t, res, sandbox.EInternal); !strings.Contains(e.Hint, "store") || strings.Contains(e.Message, "127.0.0.1") {
		t.Errorf("Redis down: %+v", e)
	}
	se.check(t, "Redis down, nothing made: ", 2, 1)
	r.Start()
	res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil || !res.NeedsInput() {
		t.Fatalf("Redis back: %v %s", err, textJSON(t, res))
	}
}
