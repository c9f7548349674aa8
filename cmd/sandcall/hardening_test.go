package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
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
	other := &headerRecorder{h: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newUpstream() }, nil)}
	evil := httptest.NewServer(other)
	defer evil.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()

	dir := t.TempDir()
	def := map[string]any{"type": "http", "url": redirector.URL + "/mcp", "headers": map[string]any{"Authorization": "Bearer ${TOKEN}"}, "timeout": "20s"}
	writeServers(t, dir, def)
	out, errOut, code := sandcallIn(t, dir, []string{"TOKEN=" + goodToken}, "servers", "test", "up")
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
	out, errOut, code = sandcallIn(t, dir, []string{"TOKEN=" + goodToken}, "servers", "test", "up")
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
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newUpstream() }, &mcp.StreamableHTTPOptions{JSONResponse: true})
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
	stderr := &syncBuffer{}
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

// writeFile writes src to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// rawStatus reads the status line of an HTTP answer on c, waiting at most
// a minute (a generous bound: the server is expected to answer in about a
// second).
func rawStatus(t *testing.T, c net.Conn) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "no answer: " + err.Error()
	}
	return strings.TrimSpace(line)
}

// TestServeSlowBody: a request body sent a byte at a time (slowloris) is
// cut off with 408 after http.body_timeout; the connection does not stay
// held.
func TestServeSlowBody(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, t.TempDir(), "sandcall.yaml", "version: 1\nhttp: {body_timeout: 1s}\n")
	u, _ := startHTTP(t, "--demo", "--isolation", "inprocess", "--config", cfg)
	host := strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/mcp")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n{", host)
	if got := rawStatus(t, c); !strings.Contains(got, " 408 ") {
		t.Errorf("a trickled body: %q, want 408", got)
	}
}

// TestServeConnectionLimit: past http.max_connections open connections, one
// more is answered 503 with Retry-After at once.
func TestServeConnectionLimit(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, t.TempDir(), "sandcall.yaml", "version: 1\nhttp: {max_connections: 2}\n")
	u, _ := startHTTP(t, "--demo", "--isolation", "inprocess", "--config", cfg)
	host := strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/mcp")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	if got := rawStatus(t, conns[2]); !strings.Contains(got, " 503 ") {
		t.Errorf("a third connection with max_connections 2: %q, want 503", got)
	}
}

// TestServeRateLimit: each principal has its own token bucket; past its
// burst a principal's requests get 429 with Retry-After while another
// principal's still pass.
func TestServeRateLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "sandcall.yaml", `version: 1
http: {rate_limit: {per_second: 0.01, burst: 3}}
auth:
  tokens:
    - sha256: `+hashOf(t, "alice-secret-token")+`
      principal: alice
    - sha256: `+hashOf(t, "bob-secret-token")+`
      principal: bob
`)
	u, _ := startHTTP(t, "--demo", "--isolation", "inprocess", "--config", cfg)
	post := func(tok string) *http.Response {
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for i := range 3 {
		if r := post("alice-secret-token"); r.StatusCode != http.StatusOK {
			t.Fatalf("alice's request %d within the burst: %d", i+1, r.StatusCode)
		}
	}
	r := post("alice-secret-token")
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Errorf("alice's 4th request: %d, Retry-After %q; want 429 with Retry-After", r.StatusCode, r.Header.Get("Retry-After"))
	}
	if r := post("bob-secret-token"); r.StatusCode != http.StatusOK {
		t.Errorf("bob, while alice is limited: %d", r.StatusCode)
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
	stderr := &syncBuffer{}
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

// tokenClient connects a go-sdk client to url with a bearer token.
func tokenClient(t *testing.T, ctx context.Context, url, tok string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{tok}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// runOutcome calls run_code and returns ok, the result and the error's code
// and message.
func runOutcome(t *testing.T, ctx context.Context, cs *mcp.ClientSession, args map[string]any) (ok bool, result, code, msg string) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  *struct{ Code, Message string }
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Error != nil {
		code, msg = r.Error.Code, r.Error.Message
	}
	return r.OK, string(r.Result), code, msg
}

// TestWasmModuleBoundToPrincipal: over HTTP with two tokens, a module one
// principal sent runs by its hash for that principal only; for the other it
// is the same error as a hash nobody ever sent.
func TestWasmModuleBoundToPrincipal(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile("../../sandbox/wasm/testdata/call_tool.wasm") // calls ping({n: 41})
	if err != nil {
		t.Fatal(err)
	}
	sha := fmt.Sprintf("%x", sha256.Sum256(mod))
	cfg := writeFile(t, t.TempDir(), "sandcall.yaml", `version: 1
auth:
  tokens:
    - sha256: `+hashOf(t, "alice-secret-token")+`
      principal: alice
    - sha256: `+hashOf(t, "bob-secret-token")+`
      principal: bob
`)
	u, _ := startHTTP(t, "--demo", "--isolation", "inprocess", "--config", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice, bob := tokenClient(t, ctx, u, "alice-secret-token"), tokenClient(t, ctx, u, "bob-secret-token")
	if ok, res, code, msg := runOutcome(t, ctx, alice, map[string]any{"language": "wasm", "module_base64": base64.StdEncoding.EncodeToString(mod)}); !ok || res != "42" {
		t.Fatalf("alice sends the module: ok %v, result %s, %s %s", ok, res, code, msg)
	}
	if ok, res, code, msg := runOutcome(t, ctx, alice, map[string]any{"language": "wasm", "module_sha256": sha}); !ok || res != "42" {
		t.Fatalf("alice runs it by hash: ok %v, result %s, %s %s", ok, res, code, msg)
	}
	ok, res, code, msg := runOutcome(t, ctx, bob, map[string]any{"language": "wasm", "module_sha256": sha})
	if ok || code != "E_MODULE_INVALID" {
		t.Errorf("bob ran alice's module by its hash: ok %v, result %s, code %s", ok, res, code)
	}
	_, _, code2, msg2 := runOutcome(t, ctx, bob, map[string]any{"language": "wasm", "module_sha256": strings.Repeat("0", 64)})
	if code2 != code || msg2 != msg {
		t.Errorf("another's module (%s %q) and a never-sent one (%s %q) answer differently: a presence oracle", code, msg, code2, msg2)
	}
}

// TestEmptyToolNameBothTiers: tools.call("") is an unknown tool in both
// tiers, not a crashed worker, and the run goes on.
func TestEmptyToolNameBothTiers(t *testing.T) {
	t.Parallel()
	prog := filepath.Join(t.TempDir(), "p.js")
	if err := os.WriteFile(prog, []byte(`let code; try { await tools.call("", {}) } catch (e) { code = e.code } return [code, await tools.ping({n: 1})]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tier := range []string{"process", "inprocess"} {
		out, errOut, code := sandcall(t, "", "run", "--demo", "--json", "--isolation", tier, prog)
		if code != 0 || !strings.Contains(out, `"result":["E_TOOL_UNKNOWN",2]`) {
			t.Errorf("%s tier: exit %d\n%s%s", tier, code, out, errOut)
		}
	}
}

// TestSecretsNeverEchoed: a validation error does not repeat a secret-shaped
// argument to the caller, and with log_args an AWS secret access key in an
// argument is redacted in the audit record.
func TestSecretsNeverEchoed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const sk = "sk-live-0123456789abcdefABCDEF"
	const aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	pol := writeFile(t, dir, "policy.yaml", "version: 1\nrules:\n  - {name: news, tools: [search_news], log_args: true}\n")
	audit := filepath.Join(dir, "audit.jsonl")
	prog := writeFile(t, dir, "p.js", `let msg = ""
try { await tools.ping({n: "`+sk+`"}) } catch (e) { msg = e.code + ": " + e.message + " " + e.hint }
await tools.search_news({query: "keys `+aws+`"})
return msg`)
	out, errOut, code := sandcall(t, "", "run", "--demo", "--json", "--policy", pol, "--audit", audit, prog)
	if code != 0 || !strings.Contains(out, "E_TOOL_ARGS") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "sk-live") {
		t.Errorf("the validation message repeats the secret:\n%s", out)
	}
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), aws) || strings.Contains(string(data), "sk-live") {
		t.Errorf("the audit records carry a secret:\n%s", data)
	}
	if !strings.Contains(string(data), `"args":"{\"query\":\"keys [REDACTED]\"}"`) {
		t.Errorf("no audit record with the redacted args:\n%s", data)
	}
}

// TestDeniedCallerLearnsNoSchema: a call the policy denies is E_TOOL_DENIED
// even with invalid arguments; its message says nothing of the tool's
// argument types (authorization runs before validation).
func TestDeniedCallerLearnsNoSchema(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := writeFile(t, dir, "policy.yaml", "version: 1\nrules:\n  - {name: no-ping, tools: [ping], when: 'principal.id == \"admin\"', message: ping is for admins}\n")
	prog := writeFile(t, dir, "p.js", `try { await tools.ping({n: "not a number", extra: 1}) } catch (e) { return [e.code, e.message, e.hint || ""] }`)
	out, errOut, code := sandcall(t, "", "run", "--demo", "--json", "--policy", pol, prog)
	if code != 0 || !strings.Contains(out, `"result":["E_TOOL_DENIED"`) {
		t.Errorf("a denied call with invalid arguments: exit %d\n%s%s", code, out, errOut)
	}
	for _, leak := range []string{"integer", "number", "extra", "/n"} {
		if strings.Contains(strings.SplitN(out, `"result":`, 2)[1], leak) {
			t.Errorf("the denial mentions %q:\n%s", leak, out)
		}
	}
}

// TestProjectTrust: a cloned project's .mcp.json server and .agents/tools
// script do not run until `sandcall servers trust`; the refusal names the
// command; a changed definition or script needs trust again;
// --trust-project trusts for one invocation.
func TestProjectTrust(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(dir, "server-ran")
	def := map[string]any{"command": "sh", "args": []string{"-c", "touch " + marker + "; exec " + bin + " serve --demo --isolation inprocess"}}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"x": def}})
	writeFile(t, dir, ".mcp.json", string(cfg))
	if err := os.MkdirAll(filepath.Join(dir, ".agents/tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n# @description Says hello to a name.\n# @param *name string who to greet\nprintf '\"hello %s\"' \"$SANDCALL_PARAM_NAME\"\n"
	if err := os.WriteFile(filepath.Join(dir, ".agents/tools/hello"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	prog := writeFile(t, dir, "p.js", `const r = []
for (const f of [() => tools.call("x_ping", {n: 1}), () => tools.call("hello", {name: "ada"})]) {
  try { r.push(await f()) } catch (e) { r.push(e.code) }
}
return r`)
	run := func(want string, extra ...string) string {
		t.Helper()
		os.Remove(marker)
		out, errOut, code := sandcallIn(t, dir, nil, append(append([]string{"run", "--isolation", "inprocess", "--json"}, extra...), prog)...)
		if code != 0 || !strings.Contains(out, `"result":`+want) {
			t.Errorf("run %v: exit %d, want result %s\n%s%s", extra, code, want, out, errOut)
		}
		_, err := os.Stat(marker)
		if ran := err == nil; ran != strings.HasPrefix(want, "[2") {
			t.Errorf("run %v: the server's command ran: %v", extra, ran)
		}
		return errOut
	}
	errOut := run(`["E_TOOL_UNKNOWN","E_TOOL_UNKNOWN"]`)
	if !strings.Contains(errOut, `x\" from .mcp.json is not trusted`) || !strings.Contains(errOut, "runs sh -c touch") ||
		!strings.Contains(errOut, "sandcall servers trust") {
		t.Errorf("the refusal does not name the server, its command and the way out:\n%s", errOut)
	}
	if !strings.Contains(errOut, "not trusted") || !strings.Contains(errOut, "hello") {
		t.Errorf("the skipped script is not reported:\n%s", errOut)
	}
	run(`[2,"hello ada"]`, "--trust-project")
	if out, _, _ := sandcallIn(t, dir, nil, "servers", "list"); !strings.Contains(out, "not trusted") {
		t.Errorf("servers list does not say x is not trusted:\n%s", out)
	}

	out, errOut, code := sandcallIn(t, dir, nil, "servers", "trust")
	if code != 0 || !strings.Contains(out, "trusted server x") || !strings.Contains(out, "hello") {
		t.Fatalf("servers trust: exit %d\n%s%s", code, out, errOut)
	}
	run(`[2,"hello ada"]`)
	if out, _, _ := sandcallIn(t, dir, nil, "servers", "list"); strings.Contains(out, "not trusted") {
		t.Errorf("servers list says a trusted server is not:\n%s", out)
	}

	// Disabling and enabling keeps the trust; a changed command does not.
	if _, errOut, code := sandcallIn(t, dir, nil, "servers", "disable", "x"); code != 0 {
		t.Fatalf("disable: %s", errOut)
	}
	if _, errOut, code := sandcallIn(t, dir, nil, "servers", "enable", "x"); code != 0 {
		t.Fatalf("enable: %s", errOut)
	}
	run(`[2,"hello ada"]`)
	def["args"] = []string{"-c", "touch " + marker + "; exec " + bin + " serve --demo"}
	cfg, _ = json.Marshal(map[string]any{"mcpServers": map[string]any{"x": def}})
	writeFile(t, dir, ".mcp.json", string(cfg))
	if err := os.WriteFile(filepath.Join(dir, ".agents/tools/hello"), []byte(script+"# changed\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(`["E_TOOL_UNKNOWN","E_TOOL_UNKNOWN"]`)
}

// TestServeChallengeResourceMetadata: with bearer tokens, a 401 carries
// RFC 9728's resource_metadata, and that document names /mcp as the
// protected resource.
func TestServeChallengeResourceMetadata(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, t.TempDir(), "sandcall.yaml", "version: 1\nauth:\n  tokens:\n    - sha256: "+hashOf(t, "alice-secret-token")+"\n      principal: alice\n")
	u, _ := startHTTP(t, "--demo", "--isolation", "inprocess", "--config", cfg)
	resp, err := http.Post(u, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ch := resp.Header.Get("WWW-Authenticate")
	want := strings.TrimSuffix(u, "/mcp") + "/.well-known/oauth-protected-resource/mcp"
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, `resource_metadata="`+want+`"`) {
		t.Fatalf("401 challenge %q (status %d); want resource_metadata=%q", ch, resp.StatusCode, want)
	}
	resp, err = http.Get(want)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var prm struct {
		Resource string   `json:"resource"`
		Methods  []string `json:"bearer_methods_supported"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&prm); err != nil || resp.StatusCode != http.StatusOK || prm.Resource != u {
		t.Errorf("metadata: status %d, %+v, %v; want resource %s", resp.StatusCode, prm, err, u)
	}
}

// TestCancelledRequestNotAnswered: over stdio, a run_code request the
// client cancels (notifications/cancelled) once it is under way gets no
// response; the server goes on answering the next request. The run's end
// is awaited through its audit record, so a response, if one were sent,
// would come before the next request's.
func TestCancelledRequestNotAnswered(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(bin, "serve", "--demo", "--isolation", "inprocess", "--audit", "-")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); kill(cmd) })
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	runEnded := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"event":"run"`) {
				once.Do(func() { close(runEnded) })
			}
		}
	}()
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	timeout := time.After(time.Minute)
	next := func() string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the server closed stdout")
			}
			return l
		case <-timeout:
			t.Fatal("no answer within a minute")
		}
		return ""
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if l := next(); !strings.Contains(l, `"id":1`) {
		t.Fatalf("initialize: %s", l)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"while (true) {}"},"_meta":{"progressToken":"p"}}}`)
	// Cancel once the run is under way (a progress notification says so).
	for l := next(); !strings.Contains(l, "notifications/progress"); l = next() {
		if strings.Contains(l, `"id":2`) {
			t.Fatalf("run_code answered before it was cancelled: %s", l)
		}
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the user gave up"}}`)
	select {
	case <-runEnded:
	case <-timeout:
		t.Fatal("the cancelled run did not end within a minute")
	}
	// A ping and a whole run later, a response to the cancelled request
	// would have been written (with the filter none ever is: this cannot
	// fail spuriously).
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"return 1"}}}`)
	for seen := 0; seen < 2; {
		l := next()
		if strings.Contains(l, `"id":2`) {
			t.Errorf("the cancelled request was answered: %s", l)
		}
		if strings.Contains(l, `"id":3`) || strings.Contains(l, `"id":4`) {
			seen++
		}
	}
}
