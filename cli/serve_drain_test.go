package cli

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeDrain: on SIGTERM, /readyz turns 503, a new request gets 503
// with Retry-After, the program already running finishes with its result,
// and the process exits 0.
func TestServeDrain(t *testing.T) {
	t.Parallel()
	dir, started, release := gateDir(t)
	p := serveIn(t, dir, "127.0.0.1:0", "--drain-timeout", "2m")
	for _, path := range []string{"/healthz", "/readyz"} {
		if code := getStatus(t, p.base+path); code != http.StatusOK {
			t.Fatalf("GET %s = %d before the drain", path, code)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type out struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `return (await tools.gate({})) * 6`}})
		done <- out{res, err}
	}()
	readFIFO(t, started) // the program is in its tool call
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.waitLine(t, "draining")
	if code := getStatus(t, p.base+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("GET /readyz while draining = %d, want 503", code)
	}
	if code := getStatus(t, p.base+"/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz while draining = %d, want 200", code)
	}
	req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("new request while draining: %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	writeFIFO(t, release)
	o := <-done
	if o.err != nil || o.res.IsError {
		t.Fatalf("the running program did not finish during the drain: %v %v", o.err, o.res)
	}
	if got := string(textOf(o.res)); !strings.Contains(got, `"result":42`) {
		t.Errorf("result %s, want 42", got)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("exit after the drain: %v", err)
	}
}

func getStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func textOf(res *mcp.CallToolResult) []byte {
	if res == nil || len(res.Content) == 0 {
		return nil
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return []byte(tc.Text)
	}
	return nil
}

// TestServeStdioBothGenerations: `sandcall serve` over stdio serves a
// 2026-07-28 client (server/discover, per-request _meta) and a
// 2025-11-25 one (initialize), each running a program.
func TestServeStdioBothGenerations(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(proto, func(t *testing.T) {
			cmd := exec.Command(bin, "serve", "--demo")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
				Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: proto})
			t.Cleanup(func() { kill(cmd) })
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != proto {
				t.Fatalf("negotiated %q, want %q", got, proto)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `return (await tools.ping({n: 41}))`}})
			if err != nil || res.IsError || !strings.Contains(string(textOf(res)), `"result":42`) {
				t.Fatalf("run_code: %v %s", err, textOf(res))
			}
		})
	}
}
