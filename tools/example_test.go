package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// A typed tool: the schemas come from the Go types, and every call is
// validated before the function runs.
func ExampleFunc() {
	type args struct {
		Level string `json:"level" enum:"L1,L2,L3,L4,L5" jsonschema:"employee level"`
	}
	type budget struct {
		Level       string `json:"level"`
		TravelLimit int    `json:"travel_limit"`
	}
	limits := map[string]int{"L1": 2500, "L2": 3500, "L3": 5000, "L4": 6500, "L5": 8000}
	tool := tools.MustFunc(tools.Tool{
		Name:        "get_budget_by_level",
		Description: "What is the quarterly travel budget of an employee level?",
		Effects:     tools.Effects{ReadOnly: true, Idempotent: true},
	}, func(ctx context.Context, in args) (budget, error) {
		return budget{Level: in.Level, TravelLimit: limits[in.Level]}, nil
	})

	schema, _ := json.Marshal(tool.InputSchema)
	fmt.Println(string(schema))

	res, err := tool.Call(context.Background(), json.RawMessage(`{"level":"L3"}`))
	fmt.Println(string(res), err)

	_, err = tool.Call(context.Background(), json.RawMessage(`{"level":"L9"}`))
	var e *sandbox.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, e.Path)
		fmt.Println(e.Message)
		fmt.Println(e.Hint)
	}
	// Output:
	// {"type":"object","properties":{"level":{"type":"string","description":"employee level","enum":["L1","L2","L3","L4","L5"]}},"required":["level"],"additionalProperties":false}
	// {"level":"L3","travel_limit":5000} <nil>
	// E_TOOL_ARGS /level
	// argument "level": "L9" is not one of the allowed values
	// Use one of: "L1", "L2", "L3", "L4", "L5".
}

// Unknown and missing arguments are named, with the closest known name.
func ExampleTool_Validate() {
	type args struct {
		MemberID string `json:"member_id"`
		Quarter  string `json:"quarter" enum:"Q1,Q2,Q3,Q4"`
	}
	tool := tools.MustFunc(tools.Tool{Name: "get_expenses"}, func(ctx context.Context, in args) ([]string, error) {
		return nil, nil
	})
	for _, args := range []string{`{"member":"ENG-001","quarter":"Q3"}`, `{"member_id":"ENG-001"}`, `{"member_id":"ENG-001","quarter":"Q3"}`} {
		err := tool.Validate(json.RawMessage(args))
		var e *sandbox.Error
		if errors.As(err, &e) {
			fmt.Printf("%s %s: %s. %s\n", e.Code, e.Path, e.Message, e.Hint)
		} else {
			fmt.Println(err)
		}
	}
	// Output:
	// E_TOOL_ARGS /member: unknown argument "member". Did you mean "member_id"? Known arguments: member_id, quarter.
	// E_TOOL_ARGS /quarter: missing required argument "quarter". Add "quarter" with one of: "Q1", "Q2", "Q3", "Q4".
	// <nil>
}

// A tool reports a failure a model can act on with ToolError or Transient.
func ExampleTransient() {
	type args struct{}
	tool := tools.MustFunc(tools.Tool{Name: "fetch"}, func(ctx context.Context, in args) (string, error) {
		return "", tools.Transient("the backend is busy", "Try again in a few seconds.")
	})
	_, err := tool.Call(context.Background(), nil)
	b, _ := json.Marshal(err)
	fmt.Println(string(b))
	// Output:
	// {"code":"E_TOOL_FAILED","message":"the backend is busy","hint":"Try again in a few seconds.","retryable":true,"tool":"fetch","reason":"transient"}
}
