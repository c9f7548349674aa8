package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServersTestStderr: a stdio server that dies at start-up is reported
// with the last lines of its stderr (not "client is closing: EOF"), secret
// shapes redacted; `servers test --verbose` streams a healthy server's
// stderr (the npm memory server announces itself there), and the test
// does not wait after the answer.
func TestServersTestStderr(t *testing.T) {
	t.Parallel()
	bins := installNPMServers(t)
	dir := t.TempDir()
	broken := `echo "npm error code E404" >&2; ` +
		`echo "npm error 404 Not Found - GET https://registry.npmjs.org/@example%2fserver-nope?token=abc" >&2; ` +
		`echo "api_key=sk-live-0123456789abcdefghij" >&2; exit 1`
	cfg := map[string]any{"mcpServers": map[string]any{
		"broken": map[string]any{"command": "sh", "args": []string{"-c", broken}},
		"memory": map[string]any{"command": filepath.Join(bins, "mcp-server-memory"),
			"env": map[string]any{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
	}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := sandcallIn(t, dir, nil, "servers", "test", "broken")
	if code != 1 || !strings.Contains(errOut, `Failed to connect to "broken"`) ||
		!strings.Contains(errOut, "stderr ends with") || !strings.Contains(errOut, "npm error 404 Not Found") {
		t.Errorf("servers test broken: exit %d, want the server's stderr in the error\n%s", code, errOut)
	}
	if strings.Contains(errOut, "sk-live-0123456789abcdefghij") || strings.Contains(errOut, "token=abc") {
		t.Errorf("a secret of the server's stderr reached the error:\n%s", errOut)
	}

	t0 := time.Now()
	out, errOut, code := sandcallIn(t, dir, nil, "servers", "test", "--verbose", "memory")
	t.Logf("servers test memory took %v", time.Since(t0))
	if code != 0 || !strings.Contains(out, `Connected to "memory" (stdio)`) || !strings.Contains(out, "memory_read_graph") {
		t.Errorf("servers test memory: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "Knowledge Graph MCP Server running on stdio") {
		t.Errorf("servers test --verbose did not stream the server's stderr:\n%s", errOut)
	}
	_, errOut, _ = sandcallIn(t, dir, nil, "servers", "test", "memory")
	if strings.Contains(errOut, "Knowledge Graph MCP Server") {
		t.Errorf("servers test without --verbose printed the server's stderr:\n%s", errOut)
	}
}
