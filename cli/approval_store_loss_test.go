package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/store/storetest"
)

// TestApprovalUsedOnceWhateverTheStoreLoses: two replicas share a real
// redis-server. An approval asked by one and answered through the other
// pays once; then Redis restarts (no persistence: every key is gone, the
// used-marker and the sealing key alike). The same answer sent again,
// through either replica, is refused and pays nothing — the replicas' copy
// of the old key does not revive it. A replica started after the restart
// and the old ones agree on the new key: an approval it asks is answered
// through an old one.
func TestApprovalUsedOnceWhateverTheStoreLoses(t *testing.T) {
	t.Parallel()
	redis := storetest.StartRedis(t)
	effects := t.TempDir()
	replica := func() *proc {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, ".agents", "tools"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range map[string]string{
			"sandcall.yaml": fmt.Sprintf("version: 1\nstore: %s\npolicy: policy.yaml\n", redis.URL),
			"policy.yaml":   clusterPolicy,
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		writeEffectTools(t, dir, effects)
		return serveIn(t, dir, "127.0.0.1:0", "--isolation", "inprocess", "--config", "sandcall.yaml")
	}
	a, b := replica(), replica()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := map[string]any{"code": approvalProgram}
	ask := func(p *proc) (string, mcp.InputResponseMap) {
		t.Helper()
		res, err := manualSession(t, ctx, p.url).CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if !res.NeedsInput() || res.RequestState == "" {
			t.Fatalf("want input required, got %s", textOf(res))
		}
		answers := mcp.InputResponseMap{}
		for id := range res.InputRequests {
			answers[id] = &mcp.ElicitResult{Action: "accept"}
		}
		return res.RequestState, answers
	}
	answer := func(p *proc, st string, answers mcp.InputResponseMap) runOut {
		t.Helper()
		res, err := manualSession(t, ctx, p.url).CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args,
			InputResponses: answers, RequestState: st})
		if err != nil {
			t.Fatal(err)
		}
		return decodeText[runOut](t, res)
	}
	st, answers := ask(a)
	if r := answer(b, st, answers); !r.OK || string(r.Result) != `[1,1,2]` {
		t.Fatalf("answered through b: %+v %s", r.Error, r.Result)
	}
	if n := tally(t, effects, "pay"); n != 1 {
		t.Fatalf("%d pays, want 1", n)
	}

	redis.Stop()
	redis.Start()
	for _, p := range []*proc{a, b, a} {
		if r := answer(p, st, answers); r.OK {
			t.Errorf("the answered state accepted again after the store restarted: %s", r.Result)
		}
	}
	if n := tally(t, effects, "pay"); n != 1 {
		t.Fatalf("after the restart: %d pays, want 1 (the approved call ran again)", n)
	}

	c := replica()
	st, answers = ask(c)
	if r := answer(a, st, answers); !r.OK {
		t.Fatalf("asked by a replica started after the restart, answered through an older one: %+v", r.Error)
	}
	if n := tally(t, effects, "pay"); n != 2 {
		t.Errorf("%d pays, want 2", n)
	}
}
