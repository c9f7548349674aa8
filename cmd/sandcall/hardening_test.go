package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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
