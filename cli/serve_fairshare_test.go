package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFairShareOverHTTP: the real binary over HTTP with two bearer tokens.
// One principal floods the pool with 30 long runs; once its runs fill every
// slot (their progress notifications say they started), the other's 10
// short runs all finish ok, and so do the flood's own (alone it may use the
// whole pool and queue; it just does not get more than its share while
// someone else waits).
func TestFairShareOverHTTP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "sandcall.yaml")
	if err := os.WriteFile(cfg, []byte(`version: 1
auth:
  tokens:
    - sha256: `+hashOf(t, "flood-token")+`
      principal: flood
    - sha256: `+hashOf(t, "calm-token")+`
      principal: calm
pool:
  max_running: 4
  queue_timeout: 2m
`), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _ := startHTTP(t, "--demo", "--config", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	var mu sync.Mutex
	started := map[string]bool{}
	full := make(chan struct{})
	connect := func(tok string, opts *mcp.ClientOptions) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerAuth{tok}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	flood := connect("flood-token", &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			if tok, _ := r.Params.ProgressToken.(string); tok != "" && !started[tok] {
				started[tok] = true
				if len(started) == 4 {
					close(full)
				}
			}
		}})
	calm := connect("calm-token", nil)

	type outcome struct {
		who  string
		ok   bool
		code string
	}
	results := make(chan outcome, 40)
	call := func(cs *mcp.ClientSession, who, code, token string) {
		params := &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": code}}
		if token != "" {
			params.SetProgressToken(token)
		}
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			results <- outcome{who, false, err.Error()}
			return
		}
		var out struct {
			OK     bool                  `json:"ok"`
			Error  struct{ Code string } `json:"error"`
			Result json.RawMessage       `json:"result"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
		results <- outcome{who, out.OK, out.Error.Code + string(out.Result)}
	}
	for i := 0; i < 30; i++ {
		go call(flood, "flood", `progress({started: true});
			const t = Date.now(); while (Date.now() - t < 1500) {}
			return 1`, fmt.Sprintf("flood-%d", i))
	}
	select {
	case <-full:
	case <-ctx.Done():
		t.Fatal("the flood's runs never filled the pool")
	}
	for i := 0; i < 10; i++ {
		go call(calm, "calm", "return 42", "")
	}
	got := map[string]int{}
	floodBeforeCalm := 0 // flood runs that ended before calm's last one
	for i := 0; i < 40; i++ {
		o := <-results
		if !o.ok {
			t.Errorf("%s run failed: %s", o.who, o.code)
		} else {
			got[o.who]++
		}
		if o.who == "flood" && got["calm"] < 10 {
			floodBeforeCalm++
		}
	}
	// First come, first served would finish ~26 flood runs first; a fair
	// share gives calm the slots as they free.
	if floodBeforeCalm >= 15 {
		t.Errorf("%d flood runs ended before calm's 10 short ones: calm did not get its share", floodBeforeCalm)
	}
	t.Logf("flood runs ended before calm's last: %d of 30", floodBeforeCalm)
	if got["calm"] != 10 || got["flood"] != 30 {
		t.Errorf("ok runs: %v, want calm 10 and flood 30", got)
	}
}
