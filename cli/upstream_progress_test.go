package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// TestUpstreamProgressInRunProgress: through the binary, with the npm
// "everything" server's trigger-long-running-operation (which sends
// notifications/progress when its caller gives a progress token), the
// progress notifications of run_code name the upstream call and how far it
// is ("everything_trigger_long_running_operation: 2/3").
func TestUpstreamProgressInRunProgress(t *testing.T) {
	t.Parallel()
	dir := everythingProject(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "serve", "--isolation", "inprocess", "--trust-project")
	cmd.Dir = dir
	stderr := &sandboxtest.Buffer{}
	cmd.Stderr = stderr
	const tool = "everything_trigger_long_running_operation"
	var (
		mu       sync.Mutex
		messages []string
	)
	seen := make(chan struct{})
	var once sync.Once
	changed := make(chan struct{}, 16)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			messages = append(messages, r.Params.Message)
			mu.Unlock()
			if strings.Contains(r.Params.Message, tool+": ") {
				once.Do(func() { close(seen) })
			}
		}}).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	t.Cleanup(func() { kill(cmd) })
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	// The upstream attaches in the background: wait until it is listed,
	// listing again on each list_changed (2025-11-25: no client-side cache
	// of tools/list, see connectWatch).
	for listed := false; !listed; {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			listed = listed || tl.Name == tool
		}
		if !listed {
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatalf("%s never listed\n%s", tool, stderr.String())
			}
		}
	}
	params := &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"timeout_ms": 10000,
		"code": `return await tools.` + tool + `({duration: 3, steps: 3});`}}
	params.SetProgressToken("run-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		b, _ := json.Marshal(res)
		t.Fatalf("run_code failed: %s\n%s", b, stderr.String())
	}
	// Notifications are handled apart from the result: allow them a bounded
	// while to be seen.
	wait := time.NewTimer(30 * time.Second)
	defer wait.Stop()
	select {
	case <-seen:
	case <-wait.C:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("no progress notification names the upstream call's progress; got %q", messages)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, m := range messages {
		if i := strings.Index(m, tool+": "); i >= 0 && !strings.Contains(m[i:], "/3") {
			t.Errorf("the upstream's progress lacks its total: %q", m)
		}
	}
	t.Logf("progress: %q", messages)
}
