package wasm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/wasm"
)

// pingHost answers tool "ping" with n+1.
type pingHost struct{}

func (pingHost) Call(_ context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	var a struct{ N int }
	if tool != "ping" || json.Unmarshal(args, &a) != nil {
		return nil, &sandbox.Error{Code: sandbox.EToolUnknown, Message: "no such tool"}
	}
	return json.Marshal(a.N + 1)
}

// A module calls tool "ping" through the sandcall ABI and returns its
// result (testdata/call_tool.wat).
func Example() {
	e, err := wasm.New(wasm.Config{}) // the interpreter, a memory cache
	if err != nil {
		panic(err)
	}
	defer e.Close(context.Background())
	module, err := os.ReadFile("testdata/call_tool.wasm")
	if err != nil {
		panic(err)
	}
	out := e.Execute(context.Background(), &sandbox.Job{
		Program: sandbox.Program{Language: sandbox.WASM, Module: module},
		Limits:  sandbox.DefaultLimits(),
	}, pingHost{})
	fmt.Println(string(out.Value), out.Err)
	// Output: 42 <nil>
}
