package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// Embed sandcall with one custom typed tool, and talk to it with an MCP
// client over in-memory transports: a program adds 1..10 with ten tool
// calls, and only its result comes back; the tool is also served directly.
func Example() {
	type AddArgs struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add := tools.MustFunc(tools.Tool{
		Name:        "add",
		Description: "Adds two integers.",
		Effects:     tools.Effects{ReadOnly: true, Idempotent: true},
	}, func(_ context.Context, in AddArgs) (int, error) { return in.A + in.B, nil })

	cat, _ := tools.NewCatalog(add)
	broker, _ := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	runner, _ := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{})})
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Name: "calc"})
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	clientT, serverT := mcp.NewInMemoryTransports()
	go srv.Run(ctx, serverT)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()

	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"code": `let s = 0; for (let i = 1; i <= 10; i++) s = await tools.add({a: s, b: i}); return s;`,
	}})
	out := res.StructuredContent.(map[string]any)
	fmt.Println("ok:", out["ok"], "result:", out["result"], "calls:", out["calls"].(map[string]any)["total"])

	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
	fmt.Println("add:", res.Content[0].(*mcp.TextContent).Text)

	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": "two"}})
	var e struct{ Code string }
	_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &e)
	fmt.Println("isError:", res.IsError, "code:", e.Code)
	// Output:
	// ok: true result: 55 calls: 10
	// add: {"result":5}
	// isError: true code: E_TOOL_ARGS
}
