package js

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// recordHost answers every call with {"tool": name, "args": args}.
type recordHost struct{}

func (recordHost) Call(_ context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	return json.Marshal(struct {
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	}{tool, args})
}

// TestDiscoveryWrappers: tools.$search and tools.$describe are thin
// wrappers over the bound search_tools and describe_tools, and absent when
// those are not bound.
func TestDiscoveryWrappers(t *testing.T) {
	run := func(src string, bound ...string) string {
		t.Helper()
		job := &sandbox.Job{Program: sandbox.Program{Source: src}, Tools: bound,
			Limits: sandbox.Limits{Timeout: 5 * time.Second}.Resolve()}
		out := New(Config{}).Execute(context.Background(), job, recordHost{})
		if out.Err != nil {
			t.Fatalf("%s: %v", src, out.Err)
		}
		return string(out.Value)
	}
	both := []string{"search_tools", "describe_tools", "ping"}
	cases := []struct {
		src   string
		bound []string
		want  string
	}{
		{`return await tools.$search("refund an order", 3)`, both,
			`{"tool":"search_tools","args":{"query":"refund an order","limit":3}}`},
		{`return await tools.$search("refund")`, both, `{"tool":"search_tools","args":{"query":"refund"}}`},
		{`return await tools.$describe("get_x")`, both, `{"tool":"describe_tools","args":{"names":["get_x"]}}`},
		{`return await tools.$describe(["a", "b"])`, both, `{"tool":"describe_tools","args":{"names":["a","b"]}}`},
		{`return [typeof tools.$search, typeof tools.$describe]`, []string{"ping"}, `["undefined","undefined"]`},
		{`return [typeof tools.$search, typeof tools.$describe, Object.keys(tools).includes("$search")]`, []string{"search_tools"},
			`["function","undefined",false]`},
	}
	for _, c := range cases {
		if got := run(c.src, c.bound...); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}
