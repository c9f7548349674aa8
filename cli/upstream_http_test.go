package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox/sandboxtest"
	"github.com/sandcall/sandcall/tools/upstream/upstreamtest"
)

// headerRecorder is an MCP server over streamable HTTP that records the
// Authorization header of every request it gets.
type headerRecorder struct {
	mu    sync.Mutex
	auths []string
	h     http.Handler
}

func (r *headerRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.auths = append(r.auths, req.Header.Get("Authorization"))
	r.mu.Unlock()
	r.h.ServeHTTP(w, req)
}

func (r *headerRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auths...)
}

// writeServers writes .mcp.json with the server "up" defined by def.
func writeServers(t *testing.T, dir string, def map[string]any) {
	t.Helper()
	cfg, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"up": def}}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUpstreamCredentialsStayAtOrigin: an HTTP upstream that answers 307 to
// another origin never gets its credential sent there. By default the
// redirect is refused (and nothing is POSTed to the other origin); with
// "followRedirects": true it is followed without the configured headers.
func TestUpstreamCredentialsStayAtOrigin(t *testing.T) {
	t.Parallel()
	other := &headerRecorder{h: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstreamtest.NewUpstream() }, nil)}
	evil := httptest.NewServer(other)
	defer evil.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()

	dir := t.TempDir()
	def := map[string]any{"type": "http", "url": redirector.URL + "/mcp", "headers": map[string]any{"Authorization": "Bearer ${TOKEN}"}, "timeout": "20s"}
	writeServers(t, dir, def)
	out, errOut, code := sandcallIn(t, dir, []string{"TOKEN=" + upstreamtest.GoodToken}, "servers", "test", "up")
	if code == 0 {
		t.Errorf("a cross-origin redirect was followed: exit 0\n%s%s", out, errOut)
	}
	if !strings.Contains(out+errOut, "origin") {
		t.Errorf("the failure does not say the redirect went to another origin:\n%s%s", out, errOut)
	}
	if got := other.seen(); len(got) != 0 {
		t.Errorf("the other origin got %d requests (Authorization %q); want none", len(got), got)
	}

	def["followRedirects"] = true
	writeServers(t, dir, def)
	out, errOut, code = sandcallIn(t, dir, []string{"TOKEN=" + upstreamtest.GoodToken}, "servers", "test", "up")
	got := other.seen()
	if len(got) == 0 {
		t.Fatalf("followRedirects: the redirect was not followed: exit %d\n%s%s", code, out, errOut)
	}
	for _, a := range got {
		if a != "" {
			t.Errorf("followRedirects: the other origin got Authorization %q", a)
		}
	}
	if code != 0 {
		t.Errorf("followRedirects: exit %d\n%s%s", code, out, errOut)
	}
}

// hostileAnswer serves MCP over streamable HTTP, except that it answers
// tools/call with a JSON body that never ends: it writes until the client
// closes the connection or 1 GiB has gone out.
func hostileAnswer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var sent atomic.Int64
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstreamtest.NewUpstream() }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		if m.Method != "tools/call" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":"`)
		chunk := bytes.Repeat([]byte("A"), 1<<20)
		for sent.Load() < 1<<30 {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
		io.WriteString(w, `"}]}}`)
	}))
	t.Cleanup(ts.Close)
	return ts, &sent
}

// procKB reads a "VmRSS"/"VmHWM" line of /proc/pid/status, in KiB.
func procKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestUpstreamHugeAnswerBounded: a hostile HTTP upstream answers a call
// with 1 GiB; the serving binary's peak RSS stays within 64 MiB of its
// baseline and the caller gets an error, not a crash.
func TestUpstreamHugeAnswerBounded(t *testing.T) {
	t.Parallel()
	ts, sent := hostileAnswer(t)
	dir := t.TempDir()
	writeServers(t, dir, map[string]any{"type": "http", "url": ts.URL, "timeout": "60s"})
	cmd := exec.Command(bin, "serve", "--trust-project", "--isolation", "inprocess")
	cmd.Dir = dir
	cmd.Env = testEnv()
	stderr := &sandboxtest.Buffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	changed := make(chan struct{}, 16)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer func() { cs.Close(); kill(cmd) }()
	waitListed(t, cs, changed, "up_echo", true, stderr)
	pid := cmd.Process.Pid
	base := procKB(t, pid, "VmRSS")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_echo", Arguments: map[string]any{"msg": "hi"}})
	if err == nil && !res.IsError {
		t.Errorf("a 1 GiB answer was accepted")
	}
	peak := procKB(t, pid, "VmHWM")
	t.Logf("baseline RSS %d MiB, peak %d MiB, upstream sent %d MiB", base>>10, peak>>10, sent.Load()>>20)
	if peak-base > 64<<10 {
		t.Errorf("peak RSS %d MiB is %d MiB over the baseline %d MiB; want at most 64", peak>>10, (peak-base)>>10, base>>10)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("the server did not survive: %v\n%s", err, stderr.String())
	}
}
