package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/sandcall/sandcall/examples/expense"
)

// TestExpenseRows: the scanner reads every member's real get_expenses
// result as encoding/json does, and refuses what is not an array of
// objects.
func TestExpenseRows(t *testing.T) {
	ctx := context.Background()
	tools := map[string]func(context.Context, json.RawMessage) (json.RawMessage, error){}
	for _, tool := range expense.Tools() {
		tools[tool.Name] = tool.Call
	}
	for i := 1; i <= 50; i++ {
		raw, err := tools["get_expenses"](ctx, json.RawMessage(fmt.Sprintf(`{"member_id":"ENG-%03d","quarter":"Q3"}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		var want []expenseRow
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		got, err := expenseRows(raw)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("ENG-%03d: %d rows, %v; want %d rows", i, len(got), err, len(want))
		}
	}
	for _, ok := range []string{`[]`, ` [ { "category" : "travel" , "amount" : 1.5e2 , "tags" : [ "a" , { "b" : "}" } ] } ] `} {
		if _, err := expenseRows([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{``, `{}`, `[`, `[{]`, `[{"amount":x}]`, `[{"amount":}]`, `[{"category":1}]`, `[{"a":"\"}]`, `[{}{}]`, `[{"a":[}]`} {
		if rows, err := expenseRows([]byte(bad)); err == nil {
			t.Errorf("%s: read %v, want an error", bad, rows)
		}
	}
}
