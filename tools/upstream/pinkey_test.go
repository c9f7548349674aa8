package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/upstream/upstreamtest"
)

// gatedUpstream serves one tool over streamable HTTP; no request is
// answered before gate is closed, so a test decides when it comes up.
func gatedUpstream(t *testing.T, tool *mcp.Tool, gate <-chan struct{}) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "gated", Version: "1"}, nil)
	srv.AddTool(tool, upstreamtest.EchoHandler)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
			h.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func namedEcho(name, description string) *mcp.Tool {
	tl := upstreamtest.EchoTool(description)
	tl.Name = name
	return tl
}

// writeServers writes a .mcp.json of HTTP servers (name → URL) in root.
func writeServers(t *testing.T, root string, urls map[string]string) {
	t.Helper()
	m := map[string]any{}
	for name, url := range urls {
		m[name] = map[string]any{"type": "http", "url": url, "timeout": "10s"}
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": m})
	writeFile(t, filepath.Join(root, ".mcp.json"), string(cfg))
}

// attachWaiting attaches root's servers in the background with the pin
// file of root and returns the set and a function that waits until the
// catalog has a tool named name (on the catalog's change notices, no
// polling).
func attachWaiting(t *testing.T, root string) (*tools.Catalog, *Set, func(name string)) {
	t.Helper()
	pins, err := OpenPins(filepath.Join(root, DefaultPinFile), false)
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := tools.NewCatalog()
	changed := make(chan struct{}, 1)
	cat.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	set := Attach(context.Background(), cat, Options{Config: LoadConfig{Root: root}, Pins: pins, Background: true})
	t.Cleanup(set.Close)
	wait := func(name string) {
		t.Helper()
		for {
			if _, ok := cat.Lookup(name); ok {
				return
			}
			select {
			case <-changed:
			case <-set.Ready(): // every first attempt is over
				if _, ok := cat.Lookup(name); !ok {
					t.Fatalf("no tool %s once every server came up: %v", name, set.Warnings())
				}
				return
			}
		}
	}
	return cat, set, wait
}

// TestPinsKeyedByServerAndTool: a pin belongs to a server's tool, not to
// a catalog name. Server "a"'s tool "b_echo" and server "a_b"'s tool
// "echo" are both named a_b_echo in the catalog; the first one's pin does
// not make the second (another server's tool) a changed definition.
func TestPinsKeyedByServerAndTool(t *testing.T) {
	open := make(chan struct{})
	close(open)
	root := t.TempDir()
	writeServers(t, root, map[string]string{"a": gatedUpstream(t, namedEcho("b_echo", "Echoes a message (server a)."), open)})
	_, set, wait := attachWaiting(t, root)
	wait("a_b_echo")
	set.Close()

	writeServers(t, root, map[string]string{"a_b": gatedUpstream(t, namedEcho("echo", "Echoes a message (server a_b)."), open)})
	_, set, _ = attachWaiting(t, root)
	<-set.Ready()
	if got := set.Tools()["a_b"]; len(got) != 1 || len(set.Disabled()) != 0 {
		t.Fatalf("server a_b's tool: attached %v, disabled %v, warnings %v", got, set.Disabled(), set.Warnings())
	}
	b, err := os.ReadFile(filepath.Join(root, DefaultPinFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"a/b_echo"`, `"a_b/echo"`, `"version": 2`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("pin file lacks %s:\n%s", k, b)
		}
	}
}

// TestPinFileVersion1Migrated: a version 1 pin (keyed by catalog name)
// still holds: the same definition is pinned again under its server and
// tool; a changed one is disabled, never trusted as a first sight.
func TestPinFileVersion1Migrated(t *testing.T) {
	open := make(chan struct{})
	close(open)
	// The hash of the definition, as pinned by the current version.
	root := t.TempDir()
	url := gatedUpstream(t, namedEcho("echo", "Echoes a message."), open)
	writeServers(t, root, map[string]string{"up": url})
	_, set, wait := attachWaiting(t, root)
	wait("up_echo")
	set.Close()
	h, ok := set.Pins().Hash(PinKey("up", "echo"))
	if !ok {
		t.Fatalf("no pin for up/echo")
	}
	for _, tc := range []struct {
		hash    string
		enabled bool
	}{{h, true}, {strings.Repeat("0", 64), false}} {
		root := t.TempDir()
		writeServers(t, root, map[string]string{"up": url})
		if err := os.MkdirAll(filepath.Join(root, ".sandcall"), 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, DefaultPinFile), `{"version":1,"tools":{"up_echo":{"hash":"`+tc.hash+`"}}}`)
		_, set, _ := attachWaiting(t, root)
		<-set.Ready()
		if got := len(set.Tools()["up"]) == 1; got != tc.enabled {
			t.Errorf("version 1 pin %.12s: enabled %v, want %v (warnings %v)", tc.hash, got, tc.enabled, set.Warnings())
		}
		if !tc.enabled {
			if set.Disabled()["up_echo"] != "up" {
				t.Errorf("changed definition not disabled: %v", set.Disabled())
			}
			continue
		}
		b, _ := os.ReadFile(filepath.Join(root, DefaultPinFile))
		if !strings.Contains(string(b), `"up/echo"`) || !strings.Contains(string(b), `"up_echo"`) {
			t.Errorf("pin file after migration:\n%s", b)
		}
	}
}
