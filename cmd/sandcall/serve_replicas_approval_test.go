package main

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
	manual := func(url string) *mcp.ClientSession {
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
	args := map[string]any{"code": approvalProgram}
	res, err := manual(c.a.url).CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
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
	res, err = manual(c.b.url).CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args,
		InputResponses: answers, RequestState: res.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	if r := decodeText[runOut](t, res); !r.OK || string(r.Result) != `[1,1,2]` {
		t.Fatalf("answered through replica b: %s", textOf(res))
	}
	if n, m := tally(t, c.effects, "count"), tally(t, c.effects, "pay"); n != 2 || m != 1 {
		t.Fatalf("resumed: %d counts, %d pays; want 2 and 1", n, m)
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
