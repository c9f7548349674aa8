package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// approvalProject is a project dir for one `sandcall serve --http` with
// the count and pay tools of testdata wasi_replay.wasm (each takes the four
// hex strings the guest read; each call appends a line to its tally in
// effects) and a policy that asks a person before each pay.
func approvalProject(t *testing.T) (dir, effects string) {
	t.Helper()
	dir, effects = t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".agents", "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	params := "# @param r string random bytes\n# @param t string realtime\n# @param m string monotonic time\n# @param s string resolution\n"
	for name, key := range map[string]string{"count": "call", "pay": "paid"} {
		script := "#!/bin/sh\n# @description Test " + name + ": counts its calls in a tally.\n" + params +
			`echo x >> "` + effects + `/` + name + `"` + "\n" +
			`echo "{\"` + key + `\": $(wc -l < "` + effects + `/` + name + `" | tr -d ' ')}"` + "\n"
		if err := os.WriteFile(filepath.Join(dir, ".agents", "tools", name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"sandcall.yaml": "version: 1\npolicy: policy.yaml\naudit: audit.jsonl\n",
		"policy.yaml":   "version: 1\nrules:\n  - name: ask-pay\n    tools: [pay]\n    require_approval: true\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, effects
}

// TestApprovalWasmBinary: through the real binary on 2026-07-28 (one
// replica, the in-memory store), with the go-sdk client answering
// input-required results itself:
//   - a WebAssembly program that reads WASI's random and clocks, calls
//     count and then pay (which needs an approval) with what it read,
//     suspends at pay and resumes by replay reading the same values (the
//     realtime clock frozen at the first attempt's time): the person is
//     asked once, each tool is called once;
//   - a direct call of pay answers input-required; the answer makes it
//     once, and the same answer sent again is refused (one-time use).
func TestApprovalWasmBinary(t *testing.T) {
	t.Parallel()
	dir, effects := approvalProject(t)
	p := serveIn(t, dir, "127.0.0.1:0", "--config", "sandcall.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mod, err := os.ReadFile("../sandbox/wasm/testdata/wasi_replay.wasm")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("wasm replay", func(t *testing.T) {
		asked := 0
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked++
				if n, m := tally(t, effects, "count"), tally(t, effects, "pay"); n != 1 || m != 0 {
					t.Errorf("while asking: %d counts, %d pays", n, m)
				}
				return &mcp.ElicitResult{Action: "accept"}, nil
			}}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.url, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		before := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code",
			Arguments: map[string]any{"language": "wasm", "module_base64": base64.StdEncoding.EncodeToString(mod)}})
		if err != nil {
			t.Fatal(err)
		}
		r := decodeText[runOut](t, res)
		var read struct{ R, T, M, S string }
		if !r.OK || json.Unmarshal(r.Result, &read) != nil || len(read.R) != 16 {
			t.Fatalf("run: %s", textOf(res))
		}
		if asked != 1 {
			t.Errorf("asked %d times, want 1 (the replay's pay must be the pending call)", asked)
		}
		if n, m := tally(t, effects, "count"), tally(t, effects, "pay"); n != 1 || m != 1 {
			t.Errorf("%d counts, %d pays; want 1 and 1", n, m)
		}
		ns, err := strconv.ParseUint(read.T, 16, 64)
		if at := time.Unix(0, int64(ns)); err != nil || at.Before(before.Add(-time.Second)) || at.After(time.Now()) {
			t.Errorf("the program read the time %s (%v), want the run's clock, between %v and now", read.T, at, before)
		}
		// The audit log: the first attempt is "suspended" (waiting for
		// approval, no error code), the replay is "ok" and names it.
		b, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var runs []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["event"] == "run" {
				runs = append(runs, m)
			}
		}
		if len(runs) != 2 || runs[0]["decision"] != "suspended" || runs[0]["code"] != "" || runs[0]["pending_tool"] != "pay" ||
			runs[1]["decision"] != "ok" || runs[1]["resumed_from"] != runs[0]["run_id"] {
			t.Errorf("audited runs: %v", runs)
		}
		out, err := exec.Command(bin, "audit", "stats", "--json", filepath.Join(dir, "audit.jsonl")).Output()
		var st struct{ Runs map[string]int }
		if err != nil || json.Unmarshal(out, &st) != nil || st.Runs["suspended"] != 1 || st.Runs["ok"] != 1 {
			t.Errorf("audit stats: %v %s", err, out)
		}
	})

	t.Run("direct answered once", func(t *testing.T) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.url, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		paid := tally(t, effects, "pay")
		args := map[string]any{"r": "a", "t": "b", "m": "c", "s": "d"}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: args})
		if err != nil || !res.NeedsInput() {
			t.Fatalf("want input required: %v %s", err, textOf(res))
		}
		answers := mcp.InputResponseMap{}
		for id := range res.InputRequests {
			answers[id] = &mcp.ElicitResult{Action: "accept"}
		}
		for i := range 2 {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: args, InputResponses: answers, RequestState: res.RequestState})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 && r.IsError {
				t.Fatalf("answer: %s", textOf(r))
			}
			if i == 1 && (!r.IsError || !strings.Contains(string(textOf(r)), "already answered")) {
				t.Fatalf("the same answer again: %s", textOf(r))
			}
		}
		if m := tally(t, effects, "pay"); m != paid+1 {
			t.Errorf("%d pays, want %d", m, paid+1)
		}
	})
}
