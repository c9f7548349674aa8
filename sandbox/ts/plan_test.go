package ts_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
)

// planHost records the plans it is handed and refuses when told.
type planHost struct {
	mu     sync.Mutex
	plans  []string
	calls  int
	refuse bool
}

func (h *planHost) Call(_ context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if tool == sandbox.PlanCall {
		h.plans = append(h.plans, string(args))
		if h.refuse {
			return nil, &sandbox.Error{Code: sandbox.EToolDenied, Rule: "r", Message: "refused"}
		}
		return json.RawMessage("null"), nil
	}
	h.calls++
	return json.RawMessage("1"), nil
}

// TestSendPlan: a TypeScript program's plan reaches the host once, with
// the TypeScript's lines, before it runs; a refusal stops it with no call.
func TestSendPlan(t *testing.T) {
	src := "interface A {\n  n: number;\n}\nconst a: A = { n: await tools.lookup({}) };\n\nreturn a.n + (await tools.call(\"other\", {}) as number);"
	ex := newExec()
	for _, refuse := range []bool{false, true} {
		h := &planHost{refuse: refuse}
		out := ex.Execute(context.Background(), &sandbox.Job{Program: sandbox.Program{Language: sandbox.TypeScript, Source: src},
			Limits: sandbox.DefaultLimits(), Tools: []string{"lookup"}, SendPlan: true}, h)
		if len(h.plans) != 1 || h.plans[0] != `{"tools":[{"name":"lookup","line":4},{"name":"other","line":6}],"dynamic":0}` {
			t.Fatalf("plans %q", h.plans)
		}
		if refuse && (out.Err == nil || out.Err.Rule != "r" || h.calls != 0) {
			t.Fatalf("refused: %+v after %d calls", out.Err, h.calls)
		}
		if !refuse && (out.Err != nil || h.calls != 2) {
			t.Fatalf("allowed: %+v after %d calls", out.Err, h.calls)
		}
	}
}
