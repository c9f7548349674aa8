package wasmguest_test

import (
	"errors"
	"fmt"

	"github.com/sandcall/sandcall/bindings/wasmguest"
)

// These examples are compiled by go test but not run: they need the
// sandcall host module, which exists only inside a GOOS=wasip1 GOARCH=wasm
// guest run by sandcall's WebAssembly engine (outside one, every call
// returns ErrNotGuest). examples/expense/wasm builds a whole program with
// the package and runs it on the engine in its tests.

type Budget struct {
	Level       string `json:"level"`
	TravelLimit int    `json:"travel_limit"`
}

// One tool call, and a failed one read as a ToolError.
func ExampleCall() {
	var b Budget
	if err := wasmguest.Call("get_budget_by_level", map[string]string{"level": "L3"}, &b); err != nil {
		panic(err)
	}
	fmt.Println(b.TravelLimit) // printed into the run's logs

	err := wasmguest.Call("get_budget_by_level", map[string]string{"level": "L6"}, &b)
	var te *wasmguest.ToolError
	if errors.As(err, &te) && errors.Is(err, wasmguest.ErrToolArgs) {
		wasmguest.Log("fix %s: %s (allowed: %v)", te.Path, te.Message, te.AllowedValues)
	}
}

// Fan-out: start calls, then wait for each; they run in parallel on the host.
func ExampleStart() {
	var calls []*wasmguest.Pending
	for _, level := range []string{"L1", "L2", "L3"} {
		p, err := wasmguest.Start("get_budget_by_level", map[string]string{"level": level})
		if err != nil {
			panic(err)
		}
		calls = append(calls, p)
	}
	budgets := make([]Budget, len(calls))
	for i, p := range calls {
		if err := p.Wait(&budgets[i]); err != nil {
			panic(err)
		}
	}
}

// Many calls of one tool, in parallel, results in order.
func ExampleMap() {
	args := []map[string]string{{"level": "L1"}, {"level": "L2"}, {"level": "L3"}}
	budgets, err := wasmguest.Map[Budget]("get_budget_by_level", args)
	if err != nil {
		panic(err)
	}
	if err := wasmguest.Return(budgets); err != nil {
		panic(err)
	}
}

// Read the run's input, return a result.
func ExampleInput() {
	var in struct {
		Quarter string `json:"quarter"`
	}
	if err := wasmguest.Input(&in); err != nil {
		panic(err)
	}
	if err := wasmguest.Return(map[string]string{"asked": in.Quarter}); err != nil {
		panic(err)
	}
}
