package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/tools"
)

// TestDirectCallCutByRows: a direct call whose output is over its budget
// gets the same cut as a program's call, with structured content that
// still matches the tool's closed output schema (checked by h.call), a
// text note for the model and the facts in _meta.
func TestDirectCallCutByRows(t *testing.T) {
	type row struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}
	type page struct {
		Count int   `json:"count"`
		Rows  []row `json:"rows"`
	}
	list := tools.MustFunc(tools.Tool{Name: "list_rows", Description: "Lists rows.", OutputBudget: 300},
		func(context.Context, struct{}) (page, error) {
			p := page{Count: 100}
			for i := range 100 {
				p.Rows = append(p.Rows, row{ID: i, Name: "row"})
			}
			return p, nil
		})
	h := newHarness(t, options{extra: []*tools.Tool{list}})
	res := h.call(t, "list_rows", map[string]any{})
	if res.IsError {
		t.Fatalf("isError: %v", res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var got page
	if err := json.Unmarshal(b, &got); err != nil || len(b) > 300 || got.Count != 100 || len(got.Rows) == 0 || len(got.Rows) == 100 {
		t.Fatalf("structured content = %s", b)
	}
	if strings.Contains(string(b), "truncated") {
		t.Fatalf("in-band markers in a direct result: %s", b)
	}
	if len(res.Content) != 2 {
		t.Fatalf("content = %d blocks, want the JSON and a note", len(res.Content))
	}
	note, _ := res.Content[1].(*mcp.TextContent)
	if note == nil || !strings.Contains(note.Text, "left out") {
		t.Fatalf("note = %#v", res.Content[1])
	}
	tr, _ := res.Meta["truncated"].(map[string]any)
	if tr["field"] != "rows" || tr["omitted"] != float64(100-len(got.Rows)) {
		t.Fatalf("_meta = %v", res.Meta)
	}
}

// TestDirectCallByAlias: a client that learnt a tool's old name can still
// call it directly within the alias's window (the result names the new
// tool in _meta.next_action); after the window the call fails with
// E_TOOL_UNKNOWN naming the new tool; neither alias is ever listed.
func TestDirectCallByAlias(t *testing.T) {
	type out struct {
		Sum int `json:"sum"`
	}
	add := tools.MustFunc(tools.Tool{Name: "math_add", Description: "Adds two numbers.",
		Aliases: []tools.Alias{{Name: "add_numbers", Until: time.Now().Add(time.Hour)}, {Name: "plus", Until: time.Now().Add(-time.Hour)}}},
		func(_ context.Context, in struct {
			A int `json:"a"`
			B int `json:"b"`
		}) (out, error) {
			return out{in.A + in.B}, nil
		})
	h := newHarness(t, options{extra: []*tools.Tool{add}})
	lt, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tl := range lt.Tools {
		listed[tl.Name] = true
	}
	if !listed["math_add"] || listed["add_numbers"] || listed["plus"] {
		t.Fatalf("tools/list: math_add %v, add_numbers %v, plus %v; want only math_add", listed["math_add"], listed["add_numbers"], listed["plus"])
	}

	// h.call checks results against the listed schema; aliases are not listed.
	call := func(name string) *mcp.CallToolResult {
		t.Helper()
		res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"a": 2, "b": 3}})
		if err != nil {
			t.Fatalf("CallTool(%s): protocol error %v", name, err)
		}
		return res
	}
	res := call("add_numbers")
	if res.IsError {
		t.Fatalf("call by a live alias: isError %v", res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"sum":5`) {
		t.Fatalf("structured content = %s", b)
	}
	if na, _ := json.Marshal(res.Meta["next_action"]); !strings.Contains(string(na), "math_add") {
		t.Fatalf("_meta.next_action = %s, want it to name math_add", na)
	}

	res = call("plus")
	if !res.IsError {
		t.Fatalf("call by an expired alias succeeded: %v", res.StructuredContent)
	}
	txt := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(txt, "E_TOOL_UNKNOWN") || !strings.Contains(txt, "math_add") {
		t.Fatalf("expired alias: %s, want E_TOOL_UNKNOWN naming math_add", txt)
	}
}
