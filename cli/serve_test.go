package cli

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/examples/expense"
)

func TestServeStdio(t *testing.T) {
	t.Parallel()
	ctx, cs, stderr := stdioSession(t, "serve", "--demo", "--log-level", "debug")
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if tl.OutputSchema == nil {
			t.Errorf("%s has no output schema", tl.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"describe_tools", "get_budget_by_level", "get_expenses", "get_financials", "get_price_history", "get_stock_snapshot",
		"get_team_members", "ping", "read_output", "run_code", "save_program", "search_competitors", "search_news", "search_tools"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": expense.Program}})
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, res)
	// A program that floods the console cannot reach the protocol stream.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"code": `for (let i = 0; i < 100; i++) console.log("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"); return "still fine"`}})
	if err != nil || res.IsError {
		t.Fatalf("console flood: %v %v", err, res)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping after console flood: %v", err)
	}
	// Debug logs went to stderr, not into the protocol stream.
	if !strings.Contains(stderr.String(), "level=") {
		t.Errorf("expected debug logs on stderr, got %q", stderr.String())
	}
}

func TestServeHTTP(t *testing.T) {
	t.Parallel()
	url, cmd := startHTTP(t, "--demo")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": expense.Program}})
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, res)
	cs.Close()

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	post := func(body string, mutate func(*http.Request)) int {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if mutate != nil {
			mutate(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(init, nil); got != http.StatusOK {
		t.Fatalf("plain initialize: %d", got)
	}
	if got := post(init, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }); got != http.StatusForbidden {
		t.Errorf("bad Origin: %d, want 403", got)
	}
	if got := post(init, func(r *http.Request) { r.Host = "evil.example" }); got != http.StatusForbidden {
		t.Errorf("bad Host: %d, want 403", got)
	}
	big := init[:len(init)-1] + `,"pad":"` + strings.Repeat("x", 23<<20) + `"}`
	if got := post(big, nil); got != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d, want 413", got)
	}

	// SIGTERM stops the server cleanly.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}

func TestServeRefusesRemote(t *testing.T) {
	t.Parallel()
	_, stderr, code := sandcall(t, "", "serve", "--http", "0.0.0.0:0")
	if code != 2 || !strings.Contains(stderr, "--allow-remote") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = sandcall(t, "", "serve", "--isolation", "vm")
	if code != 2 || !strings.Contains(stderr, "--isolation") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}
