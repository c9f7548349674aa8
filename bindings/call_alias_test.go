package bindings

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

var aliasUntil = time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)

// renamed returns get_prices (an echo) with the deprecated alias prices.
func renamed() *tools.Tool {
	t := echo("get_prices")
	t.Aliases = []tools.Alias{{Name: "prices", Until: aliasUntil}}
	return t
}

func clock(t time.Time) func() time.Time { return func() time.Time { return t } }

func TestAliasWithinWindow(t *testing.T) {
	b := newBroker(t, BrokerConfig{Now: clock(aliasUntil.Add(-time.Hour))}, renamed())
	r := newRun(b, sandbox.Limits{})
	res, err := r.Call(context.Background(), "prices", json.RawMessage(`{"day":"2026-11-27"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatal(err)
	}
	next, _ := got["next_action"].(string)
	if got["day"] != "2026-11-27" || !strings.Contains(next, "get_prices") || !strings.Contains(next, "2027-03-01") {
		t.Fatalf("result = %s, want the tool's result with a next_action naming get_prices and the end date", res)
	}
	// A tool's own next_action is never overwritten.
	res, err = r.Call(context.Background(), "prices", json.RawMessage(`{"next_action":"mine"}`))
	if err != nil || string(res) != `{"next_action":"mine"}` {
		t.Fatalf("res %s, err %v; want the tool's own next_action kept", res, err)
	}
	s := r.snapshot()
	if s.ByTool["get_prices"] != 2 || s.ByTool["prices"] != 0 {
		t.Fatalf("by_tool = %v, want calls counted under the tool's own name", s.ByTool)
	}
	notes := r.logNotes()
	if len(notes) != 1 || !strings.Contains(notes[0], "Call get_prices instead of prices") {
		t.Fatalf("notes = %q, want one (identical notes are kept once)", notes)
	}
}

func TestAliasNonObjectResult(t *testing.T) {
	tool := renamed()
	tool.Handler = func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`[1,2,3]`), nil
	}
	b := newBroker(t, BrokerConfig{Now: clock(aliasUntil.Add(-time.Hour))}, tool)
	r := newRun(b, sandbox.Limits{})
	res, err := r.Call(context.Background(), "prices", nil)
	if err != nil || string(res) != `[1,2,3]` {
		t.Fatalf("res %s, err %v; want the array unchanged", res, err)
	}
	if n := r.logNotes(); len(n) != 1 {
		t.Fatalf("notes = %q", n)
	}
}

func TestAliasAfterWindow(t *testing.T) {
	b := newBroker(t, BrokerConfig{Now: clock(aliasUntil)}, renamed())
	r := newRun(b, sandbox.Limits{})
	_, err := r.Call(context.Background(), "prices", nil)
	var e *sandbox.Error
	if !errors.As(err, &e) || e.Code != sandbox.EToolUnknown || !strings.Contains(e.Hint, "get_prices") {
		t.Fatalf("err = %#v, want E_TOOL_UNKNOWN whose hint names get_prices", err)
	}
	if _, err := r.Call(context.Background(), "get_prices", nil); err != nil {
		t.Fatalf("the new name: %v", err)
	}
	// A tombstone (zero Until) is never callable.
	tomb := echo("new_name")
	tomb.Aliases = []tools.Alias{{Name: "old_name"}}
	b = newBroker(t, BrokerConfig{}, tomb)
	if _, err := newRun(b, sandbox.Limits{}).Call(context.Background(), "old_name", nil); code(err) != sandbox.EToolUnknown {
		t.Fatalf("tombstone: %v", err)
	}
}

func TestAliasDirect(t *testing.T) {
	b := newBroker(t, BrokerConfig{Now: clock(aliasUntil.Add(-time.Hour))}, renamed())
	out, err := b.DirectOutcome(context.Background(), DirectCall{Principal: LocalPrincipal, Tool: "prices", Args: json.RawMessage(`{"a":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Result) != `{"a":1}` {
		t.Fatalf("direct result = %s, want it unchanged (the note goes to _meta)", out.Result)
	}
	if next, _ := out.Meta["next_action"].(string); !strings.Contains(next, "get_prices") || len(out.Notes) != 1 {
		t.Fatalf("meta %v, notes %q", out.Meta, out.Notes)
	}
}

// rows returns a tool that returns n rows, under an output budget.
func rows(name string, n, budget int, wrap bool) *tools.Tool {
	t := echo(name)
	t.OutputBudget = budget
	t.Handler = func(context.Context, json.RawMessage) (json.RawMessage, error) {
		items := make([]string, n)
		for i := range items {
			items[i] = `{"id":` + strconv.Itoa(i) + `}`
		}
		arr := "[" + strings.Join(items, ",") + "]"
		if wrap {
			return json.RawMessage(`{"count":` + strconv.Itoa(n) + `,"rows":` + arr + `}`), nil
		}
		return json.RawMessage(arr), nil
	}
	return t
}

func TestOutputCutByRows(t *testing.T) {
	b := newBroker(t, BrokerConfig{}, rows("list", 100, 200, false), rows("page", 100, 200, true))
	r := newRun(b, sandbox.Limits{})

	res, err := r.Call(context.Background(), "list", nil)
	if err != nil {
		t.Fatal(err)
	}
	var items []map[string]int
	if err := json.Unmarshal(res, &items); err != nil || len(res) > 200 || len(items) == 0 || items[len(items)-1]["id"] != len(items)-1 {
		t.Fatalf("cut array = %s (%v)", res, err)
	}

	res, err = r.Call(context.Background(), "page", nil)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Count     int              `json:"count"`
		Rows      []map[string]int `json:"rows"`
		Truncated bool             `json:"truncated"`
		Omitted   int              `json:"omitted"`
	}
	if err := json.Unmarshal(res, &page); err != nil || len(res) > 200 {
		t.Fatalf("cut object = %s (%v)", res, err)
	}
	if page.Count != 100 || !page.Truncated || page.Omitted != 100-len(page.Rows) || len(page.Rows) == 0 {
		t.Fatalf("cut object = %s", res)
	}
	s := r.snapshot()
	if s.Truncated != 2 || s.OK != 2 {
		t.Fatalf("stats = %+v, want 2 truncated calls", s)
	}
	notes := r.logNotes()
	if len(notes) != 2 || !strings.Contains(notes[0], "tool list") || !strings.Contains(notes[0], "left out "+strconv.Itoa(100-len(items))) {
		t.Fatalf("notes = %q", notes)
	}

	// Direct: the same cut, no in-band markers, the facts in _meta.
	out, err := b.DirectOutcome(context.Background(), DirectCall{Principal: LocalPrincipal, Tool: "page"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out.Result), "truncated") || len(out.Result) > 200 {
		t.Fatalf("direct cut = %s", out.Result)
	}
	tr, _ := out.Meta["truncated"].(map[string]any)
	if tr["field"] != "rows" || tr["omitted"].(int) < 1 || len(out.Notes) != 1 {
		t.Fatalf("direct meta %v, notes %q", out.Meta, out.Notes)
	}
}

// TestNotesCapped: a run's notes are capped, the rest counted.
func TestNotesCapped(t *testing.T) {
	b := newBroker(t, BrokerConfig{}, rows("list", 100, 200, false))
	r := newRun(b, sandbox.Limits{})
	for i := 0; i < maxNotes+5; i++ {
		r.note("note " + strconv.Itoa(i))
	}
	n := r.logNotes()
	if len(n) != maxNotes+1 || !strings.Contains(n[maxNotes], "5 more") {
		t.Fatalf("notes = %d: %q", len(n), n[len(n)-1])
	}
}
