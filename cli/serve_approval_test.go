package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// TestApprovalWaitNotRunTime: through the binary, in both tiers, a program's
// call that needs approval waits for the person past the run's own
// timeout_ms (the person answers only after twice the run's limit has passed
// since they were asked) and the run then completes: the wait is bounded by
// approval_timeout, not by the run's wall limit. A person who never answers
// gets E_TOOL_DENIED, audited as approval_timeout.
func TestApprovalWaitNotRunTime(t *testing.T) {
	t.Parallel()
	const runLimit = 1500 * time.Millisecond
	for _, tier := range []string{"inprocess", "process"} {
		t.Run(tier, func(t *testing.T) {
			t.Parallel() // each tier has its own server; most of the time is waiting
			dir := t.TempDir()
			writeFile(t, dir, "policy.yaml", `version: 1
rules:
  - name: ask-news
    tools: [search_news]
    require_approval: true
`)
			// approval_timeout: the person's answer after 2×runLimit must
			// arrive within it on a loaded machine; the never-answered case
			// waits it out (in parallel with the other tier).
			cfg := writeFile(t, dir, "sandcall.yaml", `version: 1
policy: policy.yaml
audit: audit.jsonl
limits:
  approval_timeout: 15s
`)
			cmd := exec.Command(bin, "serve", "--demo", "--isolation", tier, "--config", cfg)
			cmd.Dir = dir
			stderr := &sandboxtest.Buffer{}
			cmd.Stderr = stderr
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			// answer decides each elicitation: the first is answered
			// after 2×runLimit, the second never (until the server gives
			// up and the request's context ends).
			asked := make(chan struct{}, 2)
			n := 0
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					n++
					asked <- struct{}{}
					if n == 1 {
						// The person takes longer than the run may.
						late := time.NewTimer(2 * runLimit)
						defer late.Stop()
						select {
						case <-late.C:
							return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
						case <-ctx.Done():
							return nil, ctx.Err()
						}
					}
					<-ctx.Done() // never answers
					return nil, ctx.Err()
				},
			}).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, stderr.String())
			}
			defer func() { cs.Close(); cmd.Wait() }()
			prog := `const r = await tools.search_news({query: "go"}); return typeof r;`
			ok, res, code, msg := runOutcome(t, ctx, cs, map[string]any{"code": prog, "timeout_ms": runLimit.Milliseconds()})
			if !ok || res != `"object"` {
				t.Fatalf("approved after the run's limit: ok %v, result %s, %s %s\n%s", ok, res, code, msg, stderr.String())
			}
			<-asked
			ok, _, code, msg = runOutcome(t, ctx, cs, map[string]any{"code": prog, "timeout_ms": runLimit.Milliseconds()})
			if ok || code != "E_TOOL_DENIED" || !strings.Contains(msg, "15s") {
				t.Fatalf("never answered: ok %v, %s %q; want E_TOOL_DENIED naming the 15s approval timeout\n%s", ok, code, msg, stderr.String())
			}
			<-asked
			data, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var decisions []string
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var rec struct{ Tool, Decision string }
				if json.Unmarshal([]byte(l), &rec) == nil && rec.Tool == "search_news" {
					decisions = append(decisions, rec.Decision)
				}
			}
			if strings.Join(decisions, ",") != "approved,approval_timeout" {
				t.Errorf("audited decisions %v, want [approved approval_timeout]\n%s", decisions, data)
			}
		})
	}
}

// TestApprovalPromptShowsBidi: an argument built to render reversed
// (Trojan Source) reaches the person's approval prompt and the audit record
// with its bidirectional controls escaped visibly, never raw.
func TestApprovalPromptShowsBidi(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := writeFile(t, dir, "policy.yaml", `version: 1
rules:
  - name: ask-news
    tools: [search_news]
    require_approval: true
    log_args: true
`)
	audit := filepath.Join(dir, "audit.jsonl")
	cmd := exec.Command(bin, "serve", "--demo", "--isolation", "inprocess", "--policy", pol, "--audit", audit)
	cmd.Dir = dir
	stderr := &sandboxtest.Buffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var asked []string
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	const trojan = "\u202E0001 DSU\u202C"
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_news", Arguments: map[string]any{"query": trojan}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 {
		t.Fatalf("asked %d times, want once\n%s", len(asked), stderr.String())
	}
	if strings.ContainsAny(asked[0], "\u202E\u202C") || !strings.Contains(asked[0], `\u202E0001 DSU\u202C`) {
		t.Errorf("the prompt shows the bidi controls raw or not at all: %q", asked[0])
	}
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) != nil || rec["tool"] != "search_news" {
			continue
		}
		found = true
		args, _ := rec["args"].(string)
		if strings.ContainsAny(args, "\u202E\u202C") || !strings.Contains(args, `\u202E0001 DSU\u202C`) {
			t.Errorf("the audit record's args show the bidi controls raw or not at all: %q", args)
		}
	}
	if !found {
		t.Errorf("no audit record of the call:\n%s", data)
	}
}
