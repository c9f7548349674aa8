package cli

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/tools/upstream/upstreamtest"
)

// TestServersCommand runs `sandcall servers list|test` in a project whose
// .mcp.json names sandcall itself as an upstream, plus a broken server.
func TestServersCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := `{"mcpServers": {
  "demo": {"command": "` + demoBin + `", "args": ["serve", "--demo", "--isolation", "inprocess"]},
  "broken": {"command": "x", "url": "http://127.0.0.1:1/mcp"}
}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		t.Helper()
		stdout, stderr, code := sandcallIn(t, dir, nil, args...)
		return stdout + stderr, code
	}
	out, _ := run("servers", "list")
	if !strings.Contains(out, "demo") || !strings.Contains(out, "enabled") || !strings.Contains(out, `invalid server "broken"`) {
		t.Errorf("servers list:\n%s", out)
	}
	out, code := run("servers", "test", "demo")
	if code != 0 || !strings.Contains(out, "ping") || !strings.Contains(out, "get_expenses") {
		t.Errorf("servers test demo: exit %d\n%s", code, out)
	}
	out, code = run("servers", "test", "nope")
	if code == 0 {
		t.Errorf("servers test of an unknown server: exit 0\n%s", out)
	}
	// A program reaches the upstream's tools as demo_<tool>, a project
	// script and a builtin demo tool in one Promise.all.
	script := "#!/bin/sh\n# @description Says hello to a name.\n# @param *name string who to greet\nprintf '\"hello %s\"' \"$SANDCALL_PARAM_NAME\"\n"
	if err := os.MkdirAll(filepath.Join(dir, ".agents/tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".agents/tools/hello"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "p.js")
	if err := os.WriteFile(prog, []byte(`return await Promise.all([tools.demo_ping({n: 1}), tools.ping({n: 2}), tools.hello({name: "ada"})])`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = run("run", "--trust-project", "--demo", "--json", prog)
	if code != 0 || !strings.Contains(out, `"result":[2,3,"hello ada"]`) {
		t.Errorf("run with an upstream and a local script: exit %d\n%s", code, out)
	}
}

// upstreamProject writes a .mcp.json naming url as the HTTP server "up",
// authenticated with "Bearer ${TOKEN}", and returns the directory.
func upstreamProject(t *testing.T, url string, timeout any) string {
	t.Helper()
	dir := t.TempDir()
	def := map[string]any{"type": "http", "url": url, "headers": map[string]any{"Authorization": "Bearer ${TOKEN}"}, "timeout": timeout}
	cfg, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"up": def}}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestServersHTTPAuth runs `sandcall servers test` against an HTTP upstream
// with the right token, a wrong one, one without the permission, none, and
// against a server that never answers: each failure names its cause.
func TestServersHTTPAuth(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(upstreamtest.AuthHandler(upstreamtest.NewUpstream()))
	defer ts.Close()
	dir := upstreamProject(t, ts.URL, "10s")

	out, errOut, code := sandcallIn(t, dir, []string{"TOKEN=" + upstreamtest.GoodToken}, "servers", "test", "up")
	if code != 0 || !strings.Contains(out, `Connected to "up" (http): 1 tools`) || !strings.Contains(out, "up_echo") {
		t.Errorf("right token: exit %d\n%s%s", code, out, errOut)
	}
	for _, tc := range []struct {
		name, token string
		want        []string
	}{
		{"wrong token", "TOKEN=wrong-token", []string{`Failed to connect to "up": `, "hint: ", "401", "Authorization header", "token"}},
		{"empty token", "TOKEN=", []string{`Failed to connect to "up": `, "401", "Authorization header"}},
		{"no permission", "TOKEN=" + upstreamtest.LimitedToken, []string{`Failed to connect to "up": `, "hint: ", "403", "permissions"}},
		{"unset variable", "", []string{`invalid server "up": headers.Authorization: environment variable TOKEN is not set`}},
	} {
		var extra []string
		if tc.token != "" {
			extra = []string{tc.token}
		}
		out, errOut, code := sandcallIn(t, dir, extra, "servers", "test", "up")
		if code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s%s", tc.name, code, out, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, errOut)
			}
		}
		if strings.Contains(errOut+out, "wrong-token") || strings.Contains(errOut+out, upstreamtest.LimitedToken) {
			t.Errorf("%s: a token is printed:\n%s%s", tc.name, out, errOut)
		}
	}

	// A server that accepts the connection and never answers.
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer hang.Close()
	defer close(stop) // first: hang.Close waits for the handlers
	slow := upstreamProject(t, hang.URL, 500)
	_, errOut, code = sandcallIn(t, slow, []string{"TOKEN=" + upstreamtest.GoodToken}, "servers", "test", "up")
	if code != 1 || !strings.Contains(errOut, `Failed to connect to "up": `) || !strings.Contains(errOut, "hint: the server did not answer within 500ms") {
		t.Errorf("time-out: exit %d\n%s", code, errOut)
	}

	// With the right token a program calls the upstream's tool.
	prog := filepath.Join(dir, "p.js")
	if err := os.WriteFile(prog, []byte(`return (await tools.up_echo({msg: "hi"})).echo`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = sandcallIn(t, dir, []string{"TOKEN=" + upstreamtest.GoodToken}, "run", "--trust-project", "--isolation", "inprocess", "--json", prog)
	if code != 0 || !strings.Contains(out, `"result":"hi"`) {
		t.Errorf("run: exit %d\n%s%s", code, out, errOut)
	}
}

// TestServersEnableDisable turns a server off and on in the file that
// defines it, through the binary.
func TestServersEnableDisable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := `{"mcpServers": {"a": {"command": "x", "x-note": "keep me"}, "b": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}, "other": [1, 2]}`
	path := filepath.Join(dir, ".mcp.json")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := sandcallIn(t, dir, nil, "servers", "disable", "a")
	if code != 0 || !strings.Contains(out, "a disabled in .mcp.json") {
		t.Fatalf("disable: exit %d\n%s%s", code, out, errOut)
	}
	b, _ := os.ReadFile(path)
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
		Other      []int                     `json:"other"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.MCPServers["a"]["enabled"] != false || doc.MCPServers["a"]["x-note"] != "keep me" || doc.MCPServers["b"]["url"] == nil || len(doc.Other) != 2 {
		t.Fatalf("after disable:\n%s", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", fi.Mode().Perm())
	}
	out, _, _ = sandcallIn(t, dir, nil, "servers", "list")
	if !regexp.MustCompile(`(?m)^a\s+stdio\s+disabled`).MatchString(out) || !regexp.MustCompile(`(?m)^b\s+http\s+enabled`).MatchString(out) {
		t.Errorf("servers list after disable:\n%s", out)
	}
	out, errOut, code = sandcallIn(t, dir, nil, "servers", "enable", "a")
	b, _ = os.ReadFile(path)
	if code != 0 || strings.Contains(string(b), "enabled") {
		t.Fatalf("enable: exit %d\n%s%s\nfile:\n%s", code, out, errOut, b)
	}
	_, errOut, code = sandcallIn(t, dir, nil, "servers", "disable", "nope")
	if code != 1 || !strings.Contains(errOut, `no server "nope"`) || !strings.Contains(errOut, "known servers: a, b") {
		t.Fatalf("unknown server: exit %d\n%s", code, errOut)
	}
}

// TestServeRetriesUpstream starts serve while its upstream is down: when
// the upstream comes up, its tool is added (clients get list_changed) and
// a program calls it.
func TestServeRetriesUpstream(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := upstreamProject(t, "http://"+addr+"/mcp", "10s")
	cs, changed, stderr := mcpClient(t, dir, []string{"TOKEN=" + upstreamtest.GoodToken})
	waitListed(t, cs, changed, "up_echo", false, stderr)

	l2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	ts := upstreamtest.ServeOn(l2)
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() }) // serve may still hold a stream
	waitListed(t, cs, changed, "up_echo", true, stderr)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"code": `return (await tools.up_echo({msg: "late"})).echo`}})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := res.StructuredContent.(map[string]any); out["ok"] != true || out["result"] != "late" {
		t.Fatalf("run_code = %+v", res.StructuredContent)
	}
}
