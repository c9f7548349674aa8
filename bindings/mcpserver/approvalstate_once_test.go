package mcpserver_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/sandbox"
)

// manualClient is a go-sdk client on 2026-07-28 that does not answer
// input-required results itself: the test sees them and answers.
func manualClient(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
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

var approve = mcp.InputResponseMap{"sandcall_approval": &mcp.ElicitResult{Action: "accept"}}

// TestDirectApprovalWithoutSession: on 2026-07-28, a direct call of a
// tool whose policy asks for an approval answers input-required (the
// go-sdk client asks its person and sends the answer back); an accept
// makes the call exactly once, a decline makes none and is E_TOOL_DENIED.
func TestDirectApprovalWithoutSession(t *testing.T) {
	for _, accept := range []bool{true, false} {
		t.Run(fmt.Sprint("accept=", accept), func(t *testing.T) {
			var se sideEffects
			ts, _ := newHTTP(t, options{auth: mustPolicy(t, approvePay), extra: se.tools()})
			asked := 0
			var message string
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked++
					message = req.Params.Message
					if se.pays.Load() != 0 {
						t.Errorf("paid before the answer")
					}
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
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: map[string]any{"amount": 7}})
			if err != nil {
				t.Fatal(err)
			}
			if asked != 1 || !strings.Contains(message, "pay") || !strings.Contains(message, `amount: 7`) {
				t.Errorf("asked %d times: %q", asked, message)
			}
			if accept {
				if res.IsError || !strings.Contains(string(textJSON(t, res)), `"amount":7`) {
					t.Fatalf("approved call: %s", textJSON(t, res))
				}
				if se.pays.Load() != 1 {
					t.Errorf("%d pays, want 1", se.pays.Load())
				}
			} else {
				if e := wantCode(t, res, sandbox.EToolDenied); !strings.Contains(e.Message, "declined") || e.Tool != "pay" {
					t.Errorf("declined call: %+v", e)
				}
				if se.pays.Load() != 0 {
					t.Errorf("%d pays, want 0", se.pays.Load())
				}
			}
			// A tool with no approval rule is made at once.
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: map[string]any{}})
			if err != nil || res.IsError || asked != 1 || se.counts.Load() != 1 {
				t.Fatalf("count: %v %s (asked %d)", err, textJSON(t, res), asked)
			}
		})
	}
}

// TestApprovalStateUsedOnce: the same answer sent twice, for a direct call
// and for a run: the second is refused (E_TOOL_DENIED, "already
// answered") and the approved side effect happened once. A state sent
// with another call's arguments is refused and uses nothing up.
func TestApprovalStateUsedOnce(t *testing.T) {
	var se sideEffects
	ts, _ := newHTTP(t, options{auth: mustPolicy(t, approvePay), extra: se.tools()})
	cs := manualClient(t, ts.URL+"/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("direct", func(t *testing.T) {
		args := map[string]any{"amount": 3}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: args})
		if err != nil || !res.NeedsInput() || res.RequestState == "" {
			t.Fatalf("want input required: %v %+v", err, res)
		}
		st := res.RequestState
		// Another call (other arguments, another tool) with this state.
		for _, p := range []*mcp.CallToolParams{
			{Name: "pay", Arguments: map[string]any{"amount": 300}, InputResponses: approve, RequestState: st},
			{Name: "count", Arguments: map[string]any{}, InputResponses: approve, RequestState: st},
		} {
			r, err := cs.CallTool(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if e := wantCode(t, r, sandbox.EToolArgs); e.Path != "/requestState" || e.Hint == "" {
				t.Errorf("%s %v: %+v", p.Name, p.Arguments, e)
			}
		}
		if se.pays.Load() != 0 || se.counts.Load() != 0 {
			t.Fatalf("%d pays, %d counts before the answer", se.pays.Load(), se.counts.Load())
		}
		for i := range 2 {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: args, InputResponses: approve, RequestState: st})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 && r.IsError {
				t.Fatalf("first answer: %s", textJSON(t, r))
			}
			if i == 1 {
				if e := wantCode(t, r, sandbox.EToolDenied); !strings.Contains(e.Message, "already answered") || e.Hint == "" {
					t.Errorf("second answer: %+v", e)
				}
			}
		}
		if se.pays.Load() != 1 {
			t.Fatalf("%d pays, want 1", se.pays.Load())
		}
	})

	t.Run("run_code", func(t *testing.T) {
		se.pays.Store(0)
		se.counts.Store(0)
		args := map[string]any{"code": payProgram}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
		if err != nil || !res.NeedsInput() {
			t.Fatalf("want input required: %v %+v", err, res)
		}
		st := res.RequestState
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args, InputResponses: approve, RequestState: st})
		if err != nil {
			t.Fatal(err)
		}
		if out := decodeStructured[runResult](t, r); !out.OK || string(out.Result) != `[1,5,2]` {
			t.Fatalf("first answer: %s", textJSON(t, r))
		}
		r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args, InputResponses: approve, RequestState: st})
		if err != nil {
			t.Fatal(err)
		}
		if e := wantCode(t, r, sandbox.EToolDenied); !strings.Contains(e.Message, "already answered") || e.Tool != "pay" {
			t.Errorf("second answer: %+v", e)
		}
		se.check(t, "", 2, 1)
	})
}

// TestApprovalStateCap: a run whose state to resume from would be over
// MaxRequestStateBytes ends with E_OUTPUT_LIMIT and a hint naming the ways
// out, instead of returning the state; a state sent back over the cap is
// refused before it is opened.
func TestApprovalStateCap(t *testing.T) {
	var se sideEffects
	runner := newPipeline(t, bindings.BrokerConfig{Authorizer: mustPolicy(t, approvePay)}, bindings.RunnerConfig{}, se.tools()...)
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, MaxRequestStateBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.HTTPHandler())
	defer ts.Close()
	cs := manualClient(t, ts.URL+"/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Small: under the cap.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": payProgram}})
	if err != nil || !res.NeedsInput() || len(res.RequestState) > 4<<10 {
		t.Fatalf("small run: %v %+v", err, res)
	}
	// Forty calls with their arguments in the log: over 4 KiB.
	big := `for (let i = 0; i < 40; i++) await tools.count({pad: "x".repeat(100), i});
		return await tools.pay({amount: 1})`
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": big}})
	if err != nil {
		t.Fatal(err)
	}
	if res.NeedsInput() {
		t.Fatalf("got a %d-byte state over the 4 KiB cap", len(res.RequestState))
	}
	e := wantCode(t, res, sandbox.EOutputLimit)
	if e.Tool != "pay" || !strings.Contains(e.Message, "4096 bytes") || !strings.Contains(e.Hint, "fewer or smaller tool calls") ||
		!strings.Contains(e.Hint, "stateful") {
		t.Errorf("over the cap: %+v", e)
	}
	if se.pays.Load() != 0 {
		t.Errorf("%d pays, want 0", se.pays.Load())
	}
	// A state over the cap sent back: refused by its size, not opened.
	huge := base64.RawURLEncoding.EncodeToString(make([]byte, 8<<10))
	for _, p := range []*mcp.CallToolParams{
		{Name: "run_code", Arguments: map[string]any{"code": payProgram}, InputResponses: approve, RequestState: huge},
		{Name: "pay", Arguments: map[string]any{"amount": 1}, InputResponses: approve, RequestState: huge},
	} {
		r, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if e := wantCode(t, r, sandbox.EToolArgs); e.Path != "/requestState" || !strings.Contains(e.Message, "larger than any") {
			t.Errorf("%s with a huge state: %+v", p.Name, e)
		}
	}
	// At the cap, a state is opened (and this one is not ours); one byte
	// over, it is refused by its length.
	for n, want := range map[int]string{4 << 10: "not one this server issued", 4<<10 + 1: "larger than any"} {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: map[string]any{"amount": 1},
			InputResponses: approve, RequestState: strings.Repeat("A", n)})
		if err != nil {
			t.Fatal(err)
		}
		if e := wantCode(t, r, sandbox.EToolArgs); !strings.Contains(e.Message, want) {
			t.Errorf("a %d-byte state: %+v", n, e)
		}
	}
	if se.pays.Load() != 0 {
		t.Errorf("%d pays, want 0", se.pays.Load())
	}
}

// TestSuspendedRunAudited: a run that stops for an approval on 2026-07-28
// is audited as "suspended" (waiting for approval, with the pending tool,
// no error code), not as E_CANCELLED; the resumed run is audited with its
// own outcome and resumed_from naming the suspended run (carried in the
// sealed state, so any replica can link it).
func TestSuspendedRunAudited(t *testing.T) {
	for _, accept := range []bool{true, false} {
		t.Run(fmt.Sprint("accept=", accept), func(t *testing.T) {
			var se sideEffects
			ts, audit := newHTTP(t, options{auth: mustPolicy(t, approvePay), extra: se.tools()})
			cs := manualClient(t, ts.URL+"/mcp")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			args := map[string]any{"code": payProgram}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
			if err != nil || !res.NeedsInput() {
				t.Fatalf("want input required: %v %+v", err, res)
			}
			first := audit.waitRun(t)
			if first["decision"] != "suspended" || first["code"] != "" || first["waiting_for"] != "approval" ||
				first["pending_tool"] != "pay" || first["run_id"] == "" {
				t.Errorf("suspended run audited as %v", first)
			}
			// The pending call's own record: suspended, with no error code
			// (the E_CANCELLED that ends the run is not its outcome).
			pending := false
			for len(audit.calls) > 0 {
				c := <-audit.calls
				if c["tool"] == "pay" && c["decision"] == "suspended" {
					pending = true
					if c["code"] != "" {
						t.Errorf("pending call audited with code %v", c["code"])
					}
				}
			}
			if !pending {
				t.Errorf("no audit record of the pending call")
			}
			action := "decline"
			if accept {
				action = "accept"
			}
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args,
				InputResponses: mcp.InputResponseMap{"sandcall_approval": &mcp.ElicitResult{Action: action}}, RequestState: res.RequestState})
			if err != nil || r.NeedsInput() {
				t.Fatalf("resumed: %v %+v", err, r)
			}
			second := audit.waitRun(t)
			want, code := "ok", ""
			if !accept {
				want, code = "error", string(sandbox.EToolDenied)
			}
			if second["decision"] != want || second["code"] != code || second["resumed_from"] != first["run_id"] ||
				second["run_id"] == first["run_id"] {
				t.Errorf("resumed run audited as %v (the suspended one was %v)", second, first["run_id"])
			}
		})
	}
}
