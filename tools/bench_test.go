package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

type pingIn struct {
	N int64 `json:"n"`
}

func pingTool(tb testing.TB) *Tool {
	t, err := Func(Tool{Name: "ping"}, func(ctx context.Context, in pingIn) (int64, error) { return in.N + 1, nil })
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func BenchmarkValidate(b *testing.B) {
	t := pingTool(b)
	args := json.RawMessage(`{"n":5}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := t.Validate(args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallPing(b *testing.B) {
	t := pingTool(b)
	args := json.RawMessage(`{"n":5}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := t.Call(ctx, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidators compares, on the expense schema and valid arguments,
// the subset validator (the fast path), jsonschema-go alone (decode, then
// Resolved.Validate), and the fallback a schema beyond the subset takes
// (the fast walker's syntax pass, then jsonschema-go). docs/measurements/
// 2026-12-call-path.md records the figures.
func BenchmarkValidators(b *testing.B) {
	args := json.RawMessage(`{"member_id":"ENG-001","quarter":"Q3","limit":5,"tags":["a"],"filter":{"level":"L1"}}`)
	beyond := strings.Replace(expenseSchema, `"maxItems": 2}`, `"maxItems": 2, "uniqueItems": true}`, 1)
	if beyond == expenseSchema {
		b.Fatal("uniqueItems not added")
	}
	b.Run("subset", func(b *testing.B) {
		t := toolWith(b, expenseSchema)
		b.ReportAllocs()
		for b.Loop() {
			if err := t.Validate(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonschema-go", func(b *testing.B) {
		rs, err := mustSchema(b, expenseSchema).Resolve(nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			var inst any
			if err := json.Unmarshal(args, &inst); err != nil {
				b.Fatal(err)
			}
			if err := rs.Validate(inst); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fallback", func(b *testing.B) {
		t := toolWith(b, beyond)
		if t.validator.full == nil {
			b.Fatal("the schema did not take the fallback")
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := t.Validate(args); err != nil {
				b.Fatal(err)
			}
		}
	})
}
