package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/internal/testenv"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/upstream"
)

var bin string

func TestMain(m *testing.M) { os.Exit(buildAndRun(m)) }

func buildAndRun(m *testing.M) int {
	var err error
	// Not named sandcall: a program of that name is sandcall itself and
	// never started as an upstream.
	if bin, err = testenv.DemoServer(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

const program = `
const ids = ["ENG-001", "ENG-002", "ENG-003", "ENG-004", "ENG-005"];
const rows = await Promise.all(ids.map(id => tools.demo_get_expenses({member_id: id, quarter: "Q3"})));
return ids.map((id, i) => ({id, total: Math.round(rows[i].reduce((a, e) => a + e.amount, 0) * 100) / 100}));`

// TestFanOut starts `sandcall serve --demo` as the upstream "demo" through
// a .mcp.json and runs the fan-out program through the broker and the JS
// engine.
func TestFanOut(t *testing.T) {
	root := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": bin, "args": []string{"serve", "--demo", "--isolation", "inprocess"}, "timeout": "30s"},
	}})
	if err := os.WriteFile(filepath.Join(root, ".mcp.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := tools.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	set := upstream.Attach(ctx, cat, upstream.Options{Config: upstream.LoadConfig{Root: root}})
	defer set.Close()
	if len(set.Warnings()) > 0 {
		t.Fatalf("warnings: %v", set.Warnings())
	}
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(ctx, bindings.RunRequest{Program: sandbox.Program{Source: program}})
	if !res.OK {
		t.Fatalf("run failed: %+v", res.Error)
	}
	if res.Calls.Total != 5 {
		t.Errorf("calls = %+v, want 5", res.Calls)
	}
	var got []struct {
		ID    string  `json:"id"`
		Total float64 `json:"total"`
	}
	if err := json.Unmarshal(res.Result, &got); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	want := referenceTotals(t)
	if len(got) != len(want) {
		t.Fatalf("got %d totals, want %d: %s", len(got), len(want), res.Result)
	}
	for i, g := range got {
		if want[i].total <= 0 || g.ID != want[i].id || math.Abs(g.Total-want[i].total) > 0.005 {
			t.Errorf("member %d: got %s %.2f, want %s %.2f", i, g.ID, g.Total, want[i].id, want[i].total)
		}
	}
}

type total struct {
	id    string
	total float64
}

// referenceTotals computes the five totals with the expense toolset called
// in-process, without sandcall serve, MCP or a sandbox.
func referenceTotals(t *testing.T) []total {
	t.Helper()
	var ge *tools.Tool
	for _, tl := range expense.Tools() {
		if tl.Name == "get_expenses" {
			ge = tl
		}
	}
	if ge == nil {
		t.Fatal("no get_expenses in the expense toolset")
	}
	var out []total
	for i := 1; i <= 5; i++ {
		id := fmt.Sprintf("ENG-%03d", i)
		raw, err := ge.Handler(context.Background(), json.RawMessage(`{"member_id":"`+id+`","quarter":"Q3"}`))
		if err != nil {
			t.Fatal(err)
		}
		var rows []expense.Expense
		if err := json.Unmarshal(raw, &rows); err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, e := range rows {
			sum += e.Amount
		}
		out = append(out, total{id, math.Round(sum*100) / 100})
	}
	return out
}
