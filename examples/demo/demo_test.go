package demo

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sandcall/sandcall/examples/market"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

func TestTools(t *testing.T) {
	c, err := tools.NewCatalog(Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range c.List() {
		names = append(names, tool.Name)
		if !tool.Effects.ReadOnly || !tool.Effects.Idempotent {
			t.Errorf("%s is not read-only and idempotent", tool.Name)
		}
	}
	want := []string{"get_budget_by_level", "get_expenses", "get_financials", "get_price_history", "get_stock_snapshot",
		"get_team_members", "ping", "search_competitors", "search_news"}
	if len(names) != len(want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("tools = %v, want %v", names, want)
		}
	}
	// Each call returns new tools: two catalogs never share one.
	a, b := Tools(), Tools()
	if a[0] == b[0] {
		t.Error("Tools returned the same *Tool twice")
	}
}

// Tools' market toolset injects transient failures (the demo's retry path);
// ToolsWith(market.Options{}) does not, for benchmarks.
func TestToolsWithMarketOptions(t *testing.T) {
	history := func(ts []*tools.Tool) *tools.Tool {
		for _, tool := range ts {
			if tool.Name == "get_price_history" {
				return tool
			}
		}
		t.Fatal("no get_price_history")
		return nil
	}
	flaky, steady := history(Tools()), history(ToolsWith(market.Options{}))
	failed := 0
	for _, tk := range market.Tickers() {
		args := json.RawMessage(`{"ticker":"` + tk + `","period":"1y"}`)
		if _, err := flaky.Call(context.Background(), args); err != nil {
			var e *sandbox.Error
			if !errors.As(err, &e) || !e.Retryable {
				t.Errorf("%s: %v is not a transient failure", tk, err)
			}
			failed++
		}
		if _, err := steady.Call(context.Background(), args); err != nil {
			t.Errorf("%s without injected failures: %v", tk, err)
		}
	}
	if failed == 0 {
		t.Errorf("the demo's get_price_history failed none of %d calls", len(market.Tickers()))
	}
}

func TestPing(t *testing.T) {
	ping := Ping()
	ctx := context.Background()
	for args, want := range map[string]string{`{"n":5}`: `6`, `{"n":-1}`: `0`, `{"n":9007199254740990}`: `9007199254740991`} {
		res, err := ping.Call(ctx, json.RawMessage(args))
		if err != nil || string(res) != want {
			t.Errorf("ping(%s) = %s, %v; want %s", args, res, err, want)
		}
	}
	for _, args := range []string{`{}`, `{"n":"5"}`, `{"n":1.5}`, `{"n":9007199254740991}`, `{"n":5,"m":1}`} {
		if _, err := ping.Call(ctx, json.RawMessage(args)); !errors.Is(err, sandbox.ErrToolArgs) {
			t.Errorf("ping(%s) = %v, want E_TOOL_ARGS", args, err)
		}
	}
	if ping.OutputSchema == nil || ping.OutputSchema.Type != "integer" {
		t.Errorf("ping output schema = %+v, want integer", ping.OutputSchema)
	}
}

// The fan-out workload's tool call, as the broker makes it: validate, then
// the handler.
func BenchmarkPing(b *testing.B) {
	ping := Ping()
	if _, err := tools.NewCatalog(ping); err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"n":5}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ping.Call(ctx, args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPingParallel(b *testing.B) {
	ping := Ping()
	args := json.RawMessage(`{"n":5}`)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := ping.Call(ctx, args); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
