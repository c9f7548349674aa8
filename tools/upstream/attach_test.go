package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox/sandboxtest"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/upstream/upstreamtest"
)

// manyToolsServer serves n tools over streamable HTTP and returns the root
// of a project whose .mcp.json names it "big".
func manyToolsServer(tb testing.TB, n int) (root string, stop func()) {
	tb.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
	for i := range n {
		srv.AddTool(&mcp.Tool{
			Name:        fmt.Sprintf("tool_%05d", i),
			Description: fmt.Sprintf("Tool number %d of a large server: it returns its argument.", i),
			InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
				"q": {Type: "string", Description: "the query"}}},
		}, upstreamtest.EchoHandler)
	}
	ts := httptest.NewServer(upstreamtest.AuthHandler(srv))
	root = tb.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"big": map[string]any{
		"type": "http", "url": ts.URL, "headers": map[string]any{"Authorization": "Bearer " + upstreamtest.GoodToken}, "timeout": "60s"}}})
	if err := os.WriteFile(filepath.Join(root, ".mcp.json"), cfg, 0o644); err != nil {
		tb.Fatal(err)
	}
	return root, ts.Close
}

// TestLargeToolListOnePinWrite attaches a server of 2,000 tools with a pin
// file: every tool is listed, pinned, and the pin file was replaced once
// (projfile.WriteAtomic renames a new file over it: one write, one new inode).
func TestLargeToolListOnePinWrite(t *testing.T) {
	const n = 2000
	root, stop := manyToolsServer(t, n)
	defer stop()
	path := filepath.Join(root, DefaultPinFile)
	pins, err := OpenPins(path, false)
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	var last os.FileInfo
	countWrite := func() {
		fi, err := os.Stat(path)
		if err == nil && (last == nil || !os.SameFile(fi, last)) {
			writes++
			last = fi
		}
	}
	cat, _ := tools.NewCatalog()
	set := Attach(context.Background(), cat, Options{Config: LoadConfig{Root: root}, Pins: pins})
	defer set.Close()
	countWrite()
	if got := len(set.Tools()["big"]); got != n {
		t.Fatalf("%d tools attached, want %d (warnings %v)", got, n, set.Warnings())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := parsePins(b)
	if err != nil || len(m) != n {
		t.Fatalf("pin file: %d pins, err %v; want %d", len(m), err, n)
	}
	// A second pass of the same list (a refresh) writes nothing.
	set.Refresh(context.Background())
	countWrite()
	if writes != 1 {
		t.Errorf("the pin file was written %d times, want once", writes)
	}
}

// BenchmarkAttachLargeServer attaches one upstream that lists 5,000 tools,
// with a pin file of first sights (one write), until its tools are in the
// catalog. Issue 13's bar: at most 2s on the project's 2-core machines.
func BenchmarkAttachLargeServer(b *testing.B) {
	const n = 5000
	root, stop := manyToolsServer(b, n)
	defer stop()
	for b.Loop() {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "pins.json")
		pins, err := OpenPins(path, false)
		if err != nil {
			b.Fatal(err)
		}
		cat, _ := tools.NewCatalog()
		b.StartTimer()
		set := Attach(context.Background(), cat, Options{Config: LoadConfig{Root: root}, Pins: pins})
		if got := len(set.Tools()["big"]); got != n {
			b.Fatalf("%d tools attached, want %d (warnings %v)", got, n, set.Warnings())
		}
		b.StopTimer()
		set.Close()
		b.StartTimer()
	}
}

// TestRugPullAudited: a tool disabled because its definition changed since
// it was approved is an audit record (once), not only a log line.
func TestRugPullAudited(t *testing.T) {
	ts := httptest.NewServer(upstreamtest.AuthHandler(upstreamtest.NewUpstream()))
	defer ts.Close()
	root := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"up": map[string]any{
		"type": "http", "url": ts.URL, "headers": map[string]any{"Authorization": "Bearer " + upstreamtest.GoodToken}}}})
	if err := os.WriteFile(filepath.Join(root, ".mcp.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	pins := &Pins{}
	if _, err := pins.Pin(PinKey("up", "echo"), strings.Repeat("0", 64)); err != nil { // approved long ago, differently
		t.Fatal(err)
	}
	var buf syncBuf
	audit := slog.New(slog.NewJSONHandler(&buf, nil))
	cat, _ := tools.NewCatalog()
	set := Attach(context.Background(), cat, Options{Config: LoadConfig{Root: root}, Pins: pins, Audit: audit})
	set.Refresh(context.Background()) // a second listing: no second record
	set.Close()
	if _, ok := cat.Lookup("up_echo"); ok {
		t.Fatal("the changed tool is in the catalog")
	}
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "tool_disabled" {
			recs = append(recs, m)
		}
	}
	if len(recs) != 1 || recs[0]["tool"] != "up_echo" || recs[0]["server"] != "up" || recs[0]["pinned"] != "000000000000" {
		t.Fatalf("audit records: %v\n%s", recs, buf.String())
	}
}

type syncBuf = sandboxtest.Buffer
