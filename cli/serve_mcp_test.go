package cli

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWasmModuleBoundToPrincipal: over HTTP with two tokens, a module one
// principal sent runs by its hash for that principal only; for the other it
// is the same error as a hash nobody ever sent.
func TestWasmModuleBoundToPrincipal(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile("../sandbox/wasm/testdata/call_tool.wasm") // calls ping({n: 41})
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
