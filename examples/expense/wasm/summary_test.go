package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/sandcall/sandcall/examples/expense"
)

// TestSummarize runs the program's arithmetic natively on the tools' own
// results: the copy of the reference's arithmetic gives its bytes.
func TestSummarize(t *testing.T) {
	ts := map[string]func(args string) []byte{}
	for _, tool := range expense.Tools() {
		ts[tool.Name] = func(args string) []byte {
			res, err := tool.Call(context.Background(), json.RawMessage(args))
			if err != nil {
				t.Fatalf("%s(%s): %v", tool.Name, args, err)
			}
			return res
		}
	}
	var team []member
	if err := json.Unmarshal(ts["get_team_members"](`{"department":"engineering"}`), &team); err != nil {
		t.Fatal(err)
	}
	levels := distinctLevels(team)
	if len(levels) != 5 {
		t.Errorf("levels = %v, want the 5 of the workload", levels)
	}
	limits := map[string]float64{}
	for _, l := range levels {
		var b budget
		if err := json.Unmarshal(ts["get_budget_by_level"](`{"level":"`+l+`"}`), &b); err != nil {
			t.Fatal(err)
		}
		limits[l] = b.TravelLimit
	}
	expenses := make([][]expenseRow, len(team))
	for i, m := range team {
		if err := json.Unmarshal(ts["get_expenses"](`{"member_id":"`+m.ID+`","quarter":"Q3"}`), &expenses[i]); err != nil {
			t.Fatal(err)
		}
	}
	// Encoded as wasmguest.Return does: compact, no HTML escaping.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(summarize(team, limits, expenses)); err != nil {
		t.Fatal(err)
	}
	got := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if want := expense.ReferenceSummary(); !bytes.Equal(got, want) {
		t.Errorf("summary differs from ReferenceSummary:\n got %s\nwant %s", got, want)
	}

	// Nobody over budget is [], as in JavaScript, not null.
	if b, _ := json.Marshal(summarize(nil, nil, nil)); string(b) != "[]" {
		t.Errorf("empty summary = %s", b)
	}
}
