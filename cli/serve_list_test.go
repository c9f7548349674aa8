package cli

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTSListToolsManyUpstreamTools: the official TypeScript SDK's
// listTools() against sandcall with an upstream of 5,000 tools. Over the
// list threshold (the default), the first page is an array holding
// run_code and the discovery tools, and no page is "tools": null; with no
// threshold, every tool is listed across pages that are all arrays, with
// run_code and the discovery tools first and no tool twice.
func TestTSListToolsManyUpstreamTools(t *testing.T) {
	t.Parallel()
	heavy(t)
	node, client := tsSDKScript(t, "ts_list_client.mjs")
	_, server := tsSDKScript(t, "many_tools_server.mjs")
	const n = 5000
	dir := t.TempDir()
	mcpFile := writeFile(t, dir, "servers.json", `{"mcpServers": {"many": {"command": `+quoteJSON(node)+
		`, "args": [`+quoteJSON(server)+`, "5000"], "timeout": "2m"}}}`)
	type page struct {
		Names      []string `json:"names"`
		NextCursor *string  `json:"nextCursor"`
	}
	list := func(t *testing.T, want int, extra ...string) []page {
		t.Helper()
		args := append([]string{client, strconv.Itoa(want), bin, "serve", "--isolation", "inprocess", "--trust-project", "--mcp-config", mcpFile}, extra...)
		stdout, stderr := runTSClientIn(t, t.TempDir(), node, args...)
		var got struct {
			Pages []page `json:"pages"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &got); err != nil {
			t.Fatalf("ts client output %q: %v\nstderr: %s", stdout, err, stderr)
		}
		if got.Error != "" {
			t.Fatalf("listTools() threw after %d pages: %s", len(got.Pages), got.Error)
		}
		if len(got.Pages) == 0 {
			t.Fatal("no page")
		}
		first := got.Pages[0].Names
		for _, name := range []string{"run_code", "search_tools", "describe_tools"} {
			if !slices.Contains(first, name) {
				t.Errorf("%s is not on the first page (%d tools, first %v)", name, len(first), first[:min(len(first), 5)])
			}
		}
		return got.Pages
	}
	t.Run("over the threshold", func(t *testing.T) {
		// Of the 5,000, the 1,250 read-only tools are callable from
		// programs (the default policy keeps destructive ones direct-only).
		pages := list(t, 1250)
		if len(pages) != 1 || pages[0].NextCursor != nil {
			t.Errorf("%d pages (first with %d tools, cursor %v), want one page without a cursor", len(pages), len(pages[0].Names), pages[0].NextCursor)
		}
	})
	t.Run("no threshold", func(t *testing.T) {
		cfg := writeFile(t, t.TempDir(), "sandcall.yaml", "version: 1\nlist_threshold: -1\n")
		pages := list(t, n, "--config", cfg)
		seen := map[string]bool{}
		upstream := 0
		for i, p := range pages {
			if len(p.Names) == 0 {
				t.Errorf("page %d is empty", i+1)
			}
			for _, name := range p.Names {
				if seen[name] {
					t.Errorf("%s listed twice", name)
				}
				seen[name] = true
				if strings.HasPrefix(name, "many_") {
					upstream++
				}
			}
		}
		if upstream != n {
			t.Errorf("%d upstream tools listed over %d pages, want %d", upstream, len(pages), n)
		}
	})
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
