package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// TestListPagesSurviveListChanged: with 2,500 tools listed (no threshold),
// tools/list comes in pages that are all arrays, run_code and the
// discovery tools first; a cursor taken before the catalog changes
// (tools added before and after it, one removed after it) resumes after
// the same tool: nothing that stayed is listed twice or skipped, and the
// tool added after the cursor is listed.
func TestListPagesSurviveListChanged(t *testing.T) {
	ts := catalogOf(t, 2500)
	cat, err := tools.NewCatalog(ts...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	if err := bindings.AddDiscovery(b); err != nil {
		t.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	srv2, err := mcpserver.New(mcpserver.Config{Runner: r, ListThreshold: -1})
	if err != nil {
		t.Fatal(err)
	}
	h := connect(t, srv2, cat, nil, options{})
	ctx := context.Background()
	first, err := h.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Tools) == 0 || first.NextCursor == "" {
		t.Fatalf("first page: %d tools, cursor %q; want a full page and a cursor", len(first.Tools), first.NextCursor)
	}
	for i, want := range []string{mcpserver.RunCodeName, "describe_tools", "search_tools", mcpserver.ReadOutputName} {
		if first.Tools[i].Name != want {
			t.Errorf("first page, tool %d: %s, want %s", i, first.Tools[i].Name, want)
		}
	}
	seen := map[string]bool{}
	for _, tl := range first.Tools {
		seen[tl.Name] = true
	}
	last := first.Tools[len(first.Tools)-1].Name
	// The catalog changes between two pages.
	handler := ts[0].Handler
	for _, name := range []string{"aaa_added_before", "zzz_added_after"} {
		if err := cat.Add(&tools.Tool{Name: name, Description: "Added.", Handler: handler}); err != nil {
			t.Fatal(err)
		}
	}
	var removed string
	for _, tl := range ts {
		if tl.Name > last && removed == "" {
			removed = tl.Name
		}
	}
	cat.Remove(removed)
	if err := srv2.Refresh(); err != nil {
		t.Fatal(err)
	}
	cursor := first.NextCursor
	pages := 1
	for cursor != "" {
		res, err := h.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		b, _ := json.Marshal(res)
		var raw struct{ Tools json.RawMessage }
		_ = json.Unmarshal(b, &raw)
		if string(raw.Tools) == "null" || len(res.Tools) == 0 {
			t.Fatalf("page %d: tools %s", pages, raw.Tools)
		}
		for _, tl := range res.Tools {
			if seen[tl.Name] {
				t.Errorf("%s listed twice", tl.Name)
			}
			seen[tl.Name] = true
		}
		cursor = res.NextCursor
	}
	for _, tl := range ts {
		if tl.Name != removed && !seen[tl.Name] {
			t.Errorf("%s was skipped", tl.Name)
		}
	}
	if !seen["zzz_added_after"] || seen["aaa_added_before"] || seen[removed] {
		t.Errorf("after the change: added after the cursor listed %v, added before it %v, removed %s listed %v",
			seen["zzz_added_after"], seen["aaa_added_before"], removed, seen[removed])
	}
	if pages != 3 {
		t.Errorf("%d pages, want 3", pages)
	}
	// A cursor this server did not issue is invalid params.
	_, err = h.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: "bm90IG91cnM"})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("made-up cursor: %v, want invalid params", err)
	}
}
