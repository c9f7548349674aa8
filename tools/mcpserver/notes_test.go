package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
