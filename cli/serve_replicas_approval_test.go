package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeEffectTools writes the count and pay tools into a project dir: each
// call appends a line to its tally in the shared dir effects (one for all
// replicas) and returns the tally, so the test counts side effects.
func writeEffectTools(t *testing.T, dir, effects string) {
	t.Helper()
	scripts := map[string]string{
		"count": `#!/bin/sh
# @description Test counter: counts its calls in a shared tally.
# @param n integer which call
echo x >> "` + effects + `/count"
echo "{\"call\": $(wc -l < "` + effects + `/count" | tr -d ' ')}"
`,
		"pay": `#!/bin/sh
# @description Test payment: counts its calls in a shared tally.
# @param amount number how much
# @param r number a random number
# @param at number a time
echo x >> "` + effects + `/pay"
echo "{\"paid\": $(wc -l < "` + effects + `/pay" | tr -d ' ')}"
`,
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, ".agents", "tools", name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// tally is the number of calls a tool of writeEffectTools served.
func tally(t *testing.T, effects, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(effects, name))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// approvalProgram calls count, then pay (which needs a person's approval)
// with a random number and the time, then count again.
const approvalProgram = `const a = await tools.count({n: 1});
	const p = await tools.pay({amount: 5, r: Math.random(), at: Date.now()});
	const b = await tools.count({n: 2});
	return [a.call, p.paid, b.call]`

// testApprovalAcross: an approval asked by one replica is answered through
// the other (the request state is sealed with the key both read from
// Redis), and the run completes with each side effect made exactly once;
// then the same through HAProxy with the go-sdk client answering the input
// request itself.
func testApprovalAcross(t *testing.T, ctx context.Context, c *cluster) {
	args := map[string]any{"code": approvalProgram}
	res, err := manualSession(t, ctx, c.a.url).CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || res.RequestState == "" {
		t.Fatalf("replica a: want input required, got %s", textOf(res))
	}
	if n, m := tally(t, c.effects, "count"), tally(t, c.effects, "pay"); n != 1 || m != 0 {
		t.Fatalf("asked: %d counts, %d pays; want 1 and 0", n, m)
	}
	answers := mcp.InputResponseMap{}
	for id := range res.InputRequests {
		answers[id] = &mcp.ElicitResult{Action: "accept"}
	}
	st := res.RequestState
	res, err = manualSession(t, ctx, c.b.url).CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args,
		InputResponses: answers, RequestState: st})
	if err != nil {
		t.Fatal(err)
	}
	if r := decodeText[runOut](t, res); !r.OK || string(r.Result) != `[1,1,2]` {
		t.Fatalf("answered through replica b: %s", textOf(res))
	}
	if n, m := tally(t, c.effects, "count"), tally(t, c.effects, "pay"); n != 2 || m != 1 {
		t.Fatalf("resumed: %d counts, %d pays; want 2 and 1", n, m)
	}
	// The same answer again, through replica a: refused (one-time use,
	// recorded in Redis); nothing runs again.
	res, err = manualSession(t, ctx, c.a.url).CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args,
		InputResponses: answers, RequestState: st})
	if err != nil {
		t.Fatal(err)
	}
	if r := decodeText[runOut](t, res); r.OK || r.Error == nil || r.Error.Code != "E_TOOL_DENIED" ||
		!strings.Contains(string(textOf(res)), "already answered") {
		t.Fatalf("answered again through replica a: %s", textOf(res))
	}
	if n, m := tally(t, c.effects, "count"), tally(t, c.effects, "pay"); n != 2 || m != 1 {
		t.Fatalf("answered again: %d counts, %d pays; want 2 and 1", n, m)
	}

	// Through HAProxy, the go-sdk client answering the input request.
	asked := 0
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "accept"}, nil
		}}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if r := decodeText[runOut](t, res); !r.OK || string(r.Result) != `[3,2,4]` || asked != 1 {
		t.Fatalf("through HAProxy (asked %d): %s", asked, textOf(res))
	}
	if n, m := tally(t, c.effects, "count"), tally(t, c.effects, "pay"); n != 4 || m != 2 {
		t.Fatalf("through HAProxy: %d counts, %d pays; want 4 and 2", n, m)
	}
}

// testDirectApprovalAcross: a direct call of pay (which needs a person's
// approval) on 2026-07-28 answers input-required on one replica; the
// answer through the other makes the call exactly once (counted by the
// tool); the same answer sent again, through either replica, is refused
// (one-time use, recorded in Redis) and pays nothing; then the same
// through HAProxy with the go-sdk client answering the input request.
func testDirectApprovalAcross(t *testing.T, ctx context.Context, c *cluster) {
	paid := tally(t, c.effects, "pay")
	args := map[string]any{"amount": 9, "r": 1, "at": 2}
	a, b := manualSession(t, ctx, c.a.url), manualSession(t, ctx, c.b.url)
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || res.RequestState == "" {
		t.Fatalf("replica a: want input required, got %s", textOf(res))
	}
	if n := tally(t, c.effects, "pay"); n != paid {
		t.Fatalf("asked: %d pays, want %d", n, paid)
	}
	answers := mcp.InputResponseMap{}
	for id := range res.InputRequests {
		answers[id] = &mcp.ElicitResult{Action: "accept"}
	}
	st := res.RequestState
	res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: args, InputResponses: answers, RequestState: st})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(string(textOf(res)), `"paid"`) {
		t.Fatalf("answered through replica b: %s", textOf(res))
	}
	if n := tally(t, c.effects, "pay"); n != paid+1 {
		t.Fatalf("answered: %d pays, want %d", n, paid+1)
	}
	for _, cs := range []*mcp.ClientSession{a, b} {
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: args, InputResponses: answers, RequestState: st})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(string(textOf(res)), "E_TOOL_DENIED") || !strings.Contains(string(textOf(res)), "already answered") {
			t.Fatalf("the same answer again: %s", textOf(res))
		}
	}
	if n := tally(t, c.effects, "pay"); n != paid+1 {
		t.Fatalf("answered twice more: %d pays, want %d", n, paid+1)
	}

	// Through HAProxy: the go-sdk client answers the input request itself;
	// a decline pays nothing.
	for _, action := range []string{"accept", "decline"} {
		asked := 0
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked++
				return &mcp.ElicitResult{Action: action}, nil
			}}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.url, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: args})
		cs.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := paid + 2
		if action == "accept" {
			if res.IsError || asked != 1 {
				t.Fatalf("through HAProxy (asked %d): %s", asked, textOf(res))
			}
		} else if !res.IsError || asked != 1 || !strings.Contains(string(textOf(res)), "declined") {
			t.Fatalf("declined through HAProxy (asked %d): %s", asked, textOf(res))
		}
		if n := tally(t, c.effects, "pay"); n != want {
			t.Fatalf("through HAProxy, %s: %d pays, want %d", action, n, want)
		}
	}
}

// manualSession connects a go-sdk client to the replica at url that does
// not answer an input-required result itself (the test sends the answer,
// through either replica), accepts elicitations, and never reconnects.
func manualSession(t *testing.T, ctx context.Context, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		}}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
