package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/tools"
)

// TestDeferredListing: over the list threshold, with no policy, tools that
// programs may not call (destructive, as an upstream tool without
// annotations is) are served, listed to a session once its search_tools
// surfaces them (with notifications/tools/list_changed), and callable;
// every tool a search shows is callable by its stated route.
func TestDeferredListing(t *testing.T) {
	ts := catalogOf(t, 120)
	for _, tl := range ts {
		if strings.Contains(tl.Name, "delete") || strings.Contains(tl.Name, "create") {
			tl.Effects = tools.Effects{Destructive: true}
		}
	}
	cat, srv := discoveryServer(t, ts, "")
	changed := make(chan struct{}, 16)
	h := connect(t, srv, cat, nil, options{client: mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}}})
	before, _, _ := listSizes(t, h)

	res := h.call(t, bindings.SearchToolsName, map[string]any{"query": "delete a calendar event", "limit": 10})
	if res.IsError {
		t.Fatalf("search_tools: %v", res.Content)
	}
	var sr bindings.SearchResult
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &sr); err != nil {
		t.Fatal(err)
	}
	var directOnly []string
	for _, f := range sr.Tools {
		if f.Call == "" {
			t.Errorf("%s: no call route", f.Name)
		}
		if !slices.Contains(f.Callers, "code") {
			directOnly = append(directOnly, f.Name)
			if !strings.HasPrefix(f.Call, "directly as the MCP tool "+f.Name) {
				t.Errorf("%s: call = %q", f.Name, f.Call)
			}
		}
	}
	if len(directOnly) == 0 {
		t.Fatalf("search found no direct-only tool: %+v", sr.Tools)
	}
	for _, n := range directOnly {
		if slices.Contains(before, n) {
			t.Errorf("%s listed before a search surfaced it", n)
		}
	}
	<-changed // the listing change is announced
	after, _, _ := listSizes(t, h)
	for _, n := range directOnly {
		if !slices.Contains(after, n) {
			t.Errorf("%s not listed after the search surfaced it: %v", n, after)
		}
	}
	if len(after) != len(before)+len(directOnly) {
		t.Errorf("tools/list grew from %d to %d, want +%d", len(before), len(after), len(directOnly))
	}
	// Every tool shown is callable by its route.
	for _, f := range sr.Tools {
		var res *mcp.CallToolResult
		if slices.Contains(f.Callers, "code") {
			res = h.call(t, mcpserver.RunCodeName, map[string]any{"code": "return await tools." + f.Name + "({});"})
		} else {
			res = h.call(t, f.Name, map[string]any{})
		}
		if res.IsError {
			t.Errorf("%s (%s): %v", f.Name, f.Call, res.Content)
		}
	}
	// Another session has its own list.
	h2 := connect(t, srv, cat, nil, options{})
	other, _, _ := listSizes(t, h2)
	if !slices.Equal(other, before) {
		t.Errorf("another session's list = %v, want %v", other, before)
	}
}
