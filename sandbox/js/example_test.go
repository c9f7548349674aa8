package js_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
)

// pingHost serves one tool: ping({n}) → n+1.
type pingHost struct{}

func (pingHost) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	var a struct{ N int }
	if tool != "ping" || json.Unmarshal(args, &a) != nil {
		return nil, sandbox.Errorf(sandbox.EToolUnknown, "", "no such tool")
	}
	return []byte(strconv.Itoa(a.N + 1)), nil
}

func Example() {
	engine := js.New(js.Config{})
	job := &sandbox.Job{
		Program: sandbox.Program{
			Source: `
				const rs = await Promise.all([1, 2, 3].map((n) => tools.ping({ n })))
				console.log("got", rs)
				try { await tools.call("nope", {}) } catch (e) { console.warn(e.code) }
				return { sum: rs.reduce((a, b) => a + b, 0), from: input.who }`,
			Input: json.RawMessage(`{"who":"example"}`),
		},
		Limits: sandbox.DefaultLimits(),
		Tools:  []string{"ping"},
	}
	out := engine.Execute(context.Background(), job, pingHost{})
	fmt.Println(string(out.Value), out.Err)
	fmt.Println(out.Logs)
	// Output:
	// {"sum":9,"from":"example"} <nil>
	// [got [2,3,4] [warn] E_TOOL_UNKNOWN]
}
