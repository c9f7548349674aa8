package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// proc is one `sandcall serve --http` started by a test.
type proc struct {
	url   string // http://127.0.0.1:PORT/mcp
	base  string // http://127.0.0.1:PORT
	cmd   *exec.Cmd
	lines chan string // stderr after the listening line
}

// serveIn starts `sandcall serve --http ADDR args...` in dir (addr
// "127.0.0.1:0" for a free port) and waits for its listening line.
func serveIn(t *testing.T, dir, addr string, args ...string) *proc {
	t.Helper()
	// --trust-project: the tests' project scripts (the gate tool) run
	// without a trust step.
	cmd := exec.Command(bin, append([]string{"serve", "--http", addr, "--trust-project"}, args...)...)
	cmd.Dir = dir
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kill(cmd) })
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody reads: drop
			}
		}
		close(lines)
	}()
	re := regexp.MustCompile(`^listening on (http://(127\.0\.0\.1:[0-9]+)/mcp)$`)
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("sandcall serve exited before listening")
			}
			if m := re.FindStringSubmatch(l); m != nil {
				return &proc{url: m[1], base: "http://" + m[2], cmd: cmd, lines: lines}
			}
		case <-time.After(time.Minute):
			t.Fatal("no 'listening on' line")
		case <-timeout:
			t.Fatal("no 'listening on' line")
		}
	}
}

// waitLine waits for a stderr line containing want.
func (p *proc) waitLine(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("sandcall serve exited before printing %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("no stderr line with %q", want)
		}
	}
}

// gateDir returns a project dir whose .agents/tools/gate tool says it
// started (a line into the FIFO started) and returns only once released
// (a line from the FIFO release): a call the test holds in flight without
// any timing.
func gateDir(t *testing.T) (dir string, started, release string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".agents", "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	started, release = filepath.Join(dir, "started.fifo"), filepath.Join(dir, "release.fifo")
	for _, f := range []string{started, release} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Skipf("skipped: no FIFOs here: %v", err)
		}
	}
	script := `#!/bin/sh
# @description Test gate: reports that it started, then waits to be released.
echo started > "$SANDCALL_WORKDIR/started.fifo"
read x < "$SANDCALL_WORKDIR/release.fifo"
echo 7
`
	if err := os.WriteFile(filepath.Join(dir, ".agents", "tools", "gate"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, started, release
}

// readFIFO reads one line from a FIFO (blocking until a writer opens it).
func readFIFO(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bufio.NewReader(f).ReadString('\n')
}

// writeFIFO writes one line to a FIFO (blocking until a reader opens it).
func writeFIFO(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("go\n")
}

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
