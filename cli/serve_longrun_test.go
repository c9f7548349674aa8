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

type longResult struct {
	OK    bool     `json:"ok"`
	Logs  []string `json:"logs"`
	Calls struct {
		Total, OK int
	} `json:"calls"`
	Partial json.RawMessage `json:"partial"`
	Error   *struct {
		Code string `json:"code"`
	} `json:"error"`
	Tier string `json:"tier"`
}

// TestLongRunProcessTier runs the long-run ergonomics through the real
// binary, over stdio, in the process tier (the worker is a separate
// process that is killed on cancellation): progress notifications with
// calls in flight and elapsed time; a cancelled run that still reports its
// calls, logs and saved progress; a timed-out run that does the same.
func TestLongRunProcessTier(t *testing.T) {
	t.Parallel()
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(bin, "serve", "--demo", "--audit", audit)
	var stderr sandboxtest.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var (
		mu       sync.Mutex
		messages []string
		saved    = make(chan struct{})
		once     sync.Once
	)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			messages = append(messages, r.Params.Message)
			mu.Unlock()
			if strings.Contains(r.Params.Message, "progress saved") {
				once.Do(func() { close(saved) })
			}
		}}).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	t.Cleanup(func() { kill(cmd) })
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	defer cs.Close()

	// Cancel mid-run: the program has made its calls, logged and saved
	// progress, and spins; the client cancels once a notification says
	// progress was saved.
	cctx, ccancel := context.WithCancel(ctx)
	params := &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `
		console.log("start");
		const a = await Promise.all([1, 2, 3].map((n) => tools.ping({n})));
		console.log("pinged", a.length);
		progress({pinged: a});
		for (;;) {}`}}
	params.SetProgressToken("cancel-me")
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, params)
		errc <- err
	}()
	select {
	case <-saved:
	case <-time.After(30 * time.Second):
		t.Fatalf("no progress notification mentioned the saved progress: %q", messages)
	}
	t0 := time.Now()
	ccancel()
	if err := <-errc; err == nil {
		t.Fatal("CallTool returned no error after cancellation")
	}
	// The cancelled request is not answered (MCP: a receiver of
	// notifications/cancelled does not respond); the run stops, as its
	// audit record says.
	var r struct {
		Code  string `json:"code"`
		Calls int    `json:"calls"`
		Tier  string `json:"tier"`
	}
	for deadline := time.Now().Add(30 * time.Second); r.Code == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		data, _ := os.ReadFile(audit)
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, `"event":"run"`) {
				_ = json.Unmarshal([]byte(l), &r)
			}
		}
	}
	t.Logf("process tier: cancel → run ended (%s) in %v", r.Code, time.Since(t0))
	if r.Code != "E_CANCELLED" || r.Calls != 3 || !strings.HasPrefix(r.Tier, "process") {
		t.Errorf("cancelled run's audit record: %+v; want E_CANCELLED, 3 calls, the process tier", r)
	}
	mu.Lock()
	inflight := false
	for _, m := range messages {
		if !strings.Contains(m, " elapsed") {
			t.Errorf("progress message %q has no elapsed time", m)
		}
		inflight = inflight || strings.Contains(m, "0 calls done (0 ok, 0 failed), 3 in flight") ||
			strings.Contains(m, "2 in flight") || strings.Contains(m, "1 in flight")
	}
	mu.Unlock()
	if !inflight {
		t.Logf("no notification caught calls in flight (they are fast); messages: %q", messages)
	}

	// Timeout: the same report, with E_TIMEOUT.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"timeout_ms": 1000, "code": `
		let n = 0;
		for (const i of [1, 2]) { n += await tools.ping({n: i}); progress({n}); }
		console.log("spinning");
		for (;;) {}`}})
	if err != nil {
		t.Fatal(err)
	}
	var tr longResult
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &tr)
	if tr.Error == nil || tr.Error.Code != "E_TIMEOUT" || tr.Calls.Total != 2 || strings.Join(tr.Logs, "|") != "spinning" || string(tr.Partial) != `{"n":5}` {
		t.Errorf("timed-out run: %s", b)
	}
}
