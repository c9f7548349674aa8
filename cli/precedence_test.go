package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/tools/upstream"
)

// TestReservedNames: built-in tools, then the upstream servers' prefixes,
// win over scripts; other names are free.
func TestReservedNames(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cfg := `{"mcpServers": {"memory": {"command": "true"}, "my-db": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}`
	if err := os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := reservedNames(upstream.LoadConfig{Root: root})
	for name, want := range map[string]string{
		"search_tools":      "built-in",
		"describe_tools":    "built-in",
		"run_code":          "built-in",
		"read_output":       "built-in",
		"memory_read_graph": `upstream server "memory"`,
		"my_db_query":       `upstream server "my-db"`,
		"memory":            "",
		"memorize":          "",
		"project_files":     "",
	} {
		got := r(name)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
