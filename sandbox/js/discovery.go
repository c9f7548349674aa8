package js

import "github.com/dop251/goja"

// The discovery tools of docs/mcp.md, wrapped as tools.$search and
// tools.$describe when they are bound.
const (
	searchToolsName   = "search_tools"
	describeToolsName = "describe_tools"
)

// discoveryFuncs returns tools.$search(query, limit) and tools.$describe(names)
// of the tools object: thin wrappers over the bound search_tools and
// describe_tools (each defined only when its tool is bound), so the calls
// take the broker's path like any other. $describe also takes one name as a
// string. "$" cannot start a tool name, so they never shadow a tool.
func (r *run) discoveryFuncs() map[string]*goja.Object {
	out := map[string]*goja.Object{}
	bound := map[string]bool{}
	for _, n := range r.job.Tools {
		bound[n] = true
	}
	rt := r.rt
	if bound[searchToolsName] {
		fn := r.native("$search", func(c goja.FunctionCall) goja.Value {
			args := rt.NewObject()
			_ = args.Set("query", c.Argument(0))
			if l := c.Argument(1); !goja.IsUndefined(l) && !goja.IsNull(l) {
				_ = args.Set("limit", l)
			}
			return r.callTool(searchToolsName, args)
		})
		out["$search"] = fn
	}
	if bound[describeToolsName] {
		fn := r.native("$describe", func(c goja.FunctionCall) goja.Value {
			names := c.Argument(0)
			if goja.IsString(names) {
				names = rt.NewArray(names)
			}
			args := rt.NewObject()
			_ = args.Set("names", names)
			return r.callTool(describeToolsName, args)
		})
		out["$describe"] = fn
	}
	return out
}
