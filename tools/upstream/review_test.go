package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/upstream/upstreamtest"
)

// TestUpstreamProtocolError: an upstream that answers a call with a
// JSON-RPC error has answered, so the call is not retried as if the server
// were down, and the error's text (the upstream's, untrusted) reaches the
// program stripped of control and bidi characters.
func TestUpstreamProtocolError(t *testing.T) {
	up := upstreamtest.NewUpstream()
	var calls atomic.Int64
	up.AddTool(&mcp.Tool{Name: "boom", InputSchema: &jsonschema.Schema{Type: "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return nil, errors.New("bad \x1b[31mred\u202e thing")
		})
	up.AddTool(&mcp.Tool{Name: "gateway", InputSchema: &jsonschema.Schema{Type: "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	h := upstreamtest.AuthHandler(up)
	// A proxy in front of the upstream answers calls of "gateway" with 502.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte(`"name":"gateway"`)) {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	root := httpConfig(t, ts.URL, nil)
	cat, _ := tools.NewCatalog()
	set := Attach(context.Background(), cat, Options{Config: LoadConfig{Root: root, LookupEnv: env(map[string]string{"TOKEN": upstreamtest.GoodToken})}})
	defer set.Close()
	// A 502 is an outage, not an answer: still retryable.
	res := runJS(t, cat, `try { await tools.up_gateway({}) } catch (e) { return e.retryable }`)
	if !res.OK || string(res.Result) != "true" {
		t.Errorf("a 502 = %s %+v, want a retryable error", res.Result, res.Error)
	}
	res = runJS(t, cat, `try { await tools.up_boom({}) } catch (e) { return {m: e.message, h: e.hint, r: e.retryable, c: e.code} }`)
	if !res.OK {
		t.Fatalf("run failed: %+v", res.Error)
	}
	got := string(res.Result)
	if strings.Contains(got, `\u001b`) || strings.Contains(got, "\u202e") || !strings.Contains(got, "bad [31mred thing") {
		t.Errorf("upstream error text not cleaned: %s", got)
	}
	if !strings.Contains(got, `"r":false`) || !strings.Contains(got, `"c":"E_TOOL_FAILED"`) || strings.Contains(got, "may be down") {
		t.Errorf("a JSON-RPC error is treated as an outage: %s", got)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("upstream called %d times, want 1 (no retry of an answered call)", n)
	}
}

// TestUpstreamNameTakenByAlias: an upstream tool whose catalog name is
// already a deprecated alias of another tool is skipped with a warning,
// like one whose name is taken by a tool, and the server's other tools
// still load.
func TestUpstreamNameTakenByAlias(t *testing.T) {
	up := upstreamtest.NewUpstream()
	up.AddTool(&mcp.Tool{Name: "second", InputSchema: &jsonschema.Schema{Type: "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	ts := httptest.NewServer(upstreamtest.AuthHandler(up))
	defer ts.Close()
	root := httpConfig(t, ts.URL, nil)
	local := &tools.Tool{Name: "echo_local", Description: "Echoes, locally.", Aliases: []tools.Alias{{Name: "up_echo", Until: time.Now().Add(time.Hour)}},
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`1`), nil }}
	cat, err := tools.NewCatalog(local)
	if err != nil {
		t.Fatal(err)
	}
	set := Attach(context.Background(), cat, Options{Config: LoadConfig{Root: root, LookupEnv: env(map[string]string{"TOKEN": upstreamtest.GoodToken})}})
	defer set.Close()
	if _, ok := cat.Lookup("up_second"); !ok {
		t.Errorf("up_second missing: one taken name kept the server's other tools out; warnings %q", set.Warnings())
	}
	if tl, _, _ := cat.Resolve("up_echo"); tl != local {
		t.Errorf("up_echo resolves to %v, want the local tool's alias", tl)
	}
	if w := strings.Join(set.Warnings(), "\n"); !strings.Contains(w, "up_echo already exists") {
		t.Errorf("warnings = %s", w)
	}
}

// TestPinReloadSeesChangeReadByCheck: an approval written by another
// process and first read by a Check (a refresh of some other server) is
// still reported by the next Reload, which is what makes a serving Set
// list its tools again and re-enable the approved one.
func TestPinReloadSeesChangeReadByCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	h1, h2 := hashOf("one"), hashOf("two")
	p, err := OpenPins(path, false)
	if err != nil {
		t.Fatal(err)
	}
	p.Check("a_x", h1)
	p.Check("b_y", h1)
	if ok, _ := p.Check("a_x", h2); ok {
		t.Fatal("changed definition accepted")
	}
	cli, _ := OpenPins(path, false)
	if _, err := cli.Pin("a_x", h2); err != nil {
		t.Fatal(err)
	}
	if ok, _ := p.Check("b_y", h1); !ok { // re-reads the file first
		t.Fatal("b_y rejected")
	}
	if changed, err := p.Reload(); !changed || err != nil {
		t.Fatalf("Reload = %v, %v: the approval read by Check is never reported", changed, err)
	}
	if changed, _ := p.Reload(); changed {
		t.Fatal("Reload reported the change twice")
	}
}

// TestPinFileRewrittenSameStamp: a rewrite of the pin file that keeps its
// size and modification time (timestamps are coarse; two writes within a
// tick look alike) is still seen: every write replaces the file.
func TestPinFileRewrittenSameStamp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	h1, h2 := hashOf("one"), hashOf("two")
	p, _ := OpenPins(path, false)
	p.Check("a_x", h1)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	cli, _ := OpenPins(path, false)
	if _, err := cli.Pin("a_x", h2); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(path); fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("test setup: size %d→%d", fi.Size(), fi2.Size())
	}
	if changed, err := p.Reload(); !changed || err != nil {
		t.Fatalf("Reload = %v, %v: a same-size, same-time rewrite was missed", changed, err)
	}
	if h, _ := p.Hash("a_x"); h != h2 {
		t.Fatalf("pin = %s, want the approved %s", h, h2)
	}
}

// TestPinFileDeletedWhileServing: a pin file deleted under a running
// process does not make it forget its pins when it next writes one: a
// definition that changed is still caught, and the rewritten file holds
// every pin the process knows.
func TestPinFileDeletedWhileServing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	h1, h2 := hashOf("one"), hashOf("two")
	p, _ := OpenPins(path, false)
	p.Check("a_x", h1)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if ok, err := p.Check("b_new", h1); !ok || err != nil { // first sight: writes the file again
		t.Fatalf("first sight = %v, %v", ok, err)
	}
	if ok, _ := p.Check("a_x", h2); ok {
		t.Fatal("changed definition of a_x trusted after the pin file was deleted and rewritten")
	}
	q, err := OpenPins(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := q.Hash("a_x"); !ok || h != h1 {
		t.Fatalf("rewritten file lost the pin of a_x: %q %v", h, ok)
	}
}

// TestPinLockNotFollowed: the lock file next to the pin file is never
// followed if it is a symbolic link (a cloned project could ship one
// pointing anywhere): no file is created at its target.
func TestPinLockNotFollowed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pins.json")
	target := filepath.Join(dir, "elsewhere", "created-by-lock")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path+".lock"); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	p, _ := OpenPins(path, false)
	_, _ = p.Pin("a_x", hashOf("one")) // fails where locks are taken
	if _, err := os.Lstat(target); err == nil {
		t.Fatal("the lock file's symlink was followed: its target was created")
	}
}

// TestUpstreamErrorHidesURLSecret: a call that fails in transport quotes
// the server's URL in Go's error text; the URL's path and query (where API
// keys often ride) and user info never reach the program.
func TestUpstreamErrorHidesURLSecret(t *testing.T) {
	h := upstreamtest.AuthHandler(upstreamtest.NewUpstream())
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte(`tools/call`)) { // drop the connection
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	url := strings.Replace(ts.URL, "http://", "http://user:pa55word@", 1) + "/s/PATHSECRET/mcp?api_key=SUPERSECRET"
	root := httpConfig(t, url, nil)
	cat, _ := tools.NewCatalog()
	set := Attach(context.Background(), cat, Options{Config: LoadConfig{Root: root, LookupEnv: env(map[string]string{"TOKEN": upstreamtest.GoodToken})}})
	defer set.Close()
	res := runJS(t, cat, `try { await tools.up_echo({msg: "x"}); return "no error" } catch (e) { return e.message }`)
	got := string(res.Result)
	if !res.OK || !strings.Contains(got, `upstream server \"up\"`) {
		t.Fatalf("result = %s %+v", got, res.Error)
	}
	for _, secret := range []string{"SUPERSECRET", "PATHSECRET", "pa55word"} {
		if strings.Contains(got, secret) {
			t.Errorf("error message leaks %s: %s", secret, got)
		}
	}
}

// TestSetEnabledKeepsReferences: disabling a server rewrites its file
// from the text, never from the loaded config: ${VAR} references and
// "!command" values stay as written, and no resolved value is written.
func TestSetEnabledKeepsReferences(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, ".mcp.json")
	orig := `{"mcpServers": {"up": {"type": "http", "url": "https://h/mcp?k=${KEY}", "headers": {"Authorization": "Bearer ${TOKEN}", "X-Other": "!echo from-command"}}}}`
	writeFile(t, path, orig)
	cfg := Load(LoadConfig{Root: root, LookupEnv: env(map[string]string{"TOKEN": "resolved-token-value", "KEY": "resolved-key-value"})})
	e, ok := cfg.Lookup("up")
	if !ok || e.Server == nil || e.Server.Headers["Authorization"] != "Bearer resolved-token-value" {
		t.Fatalf("up = %+v", e)
	}
	if changed, err := SetEnabled(e, false); !changed || err != nil {
		t.Fatalf("disable = %v, %v", changed, err)
	}
	b, _ := os.ReadFile(path)
	got := string(b)
	for _, want := range []string{`"https://h/mcp?k=${KEY}"`, `"Bearer ${TOKEN}"`, `"!echo from-command"`, `"enabled": false`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
	if strings.Contains(got, "resolved-") {
		t.Errorf("a resolved value was written:\n%s", got)
	}
}
