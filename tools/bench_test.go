package tools

import (
	"context"
	"encoding/json"
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
