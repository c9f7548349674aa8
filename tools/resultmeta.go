package tools

import "context"

type resultMetaKey struct{}

// WithResultMeta returns a context under which a handler's
// ReportResultMeta calls reach f: the broker sets it for each call, to read
// the labels a tool attaches to its result (an upstream MCP server's
// CallToolResult._meta). f may be called from the handler's goroutine and
// must not block.
func WithResultMeta(ctx context.Context, f func(meta map[string]any)) context.Context {
	return context.WithValue(ctx, resultMetaKey{}, f)
}

// ReportResultMeta hands the _meta of the result a handler is about to
// return to whoever called it (see WithResultMeta); without a listener it
// does nothing. What is reported is metadata the tool claims about its
// result: the broker honours it only where the operator's policy opts in,
// and only to make a label stricter.
func ReportResultMeta(ctx context.Context, meta map[string]any) {
	if len(meta) == 0 {
		return
	}
	if f, ok := ctx.Value(resultMetaKey{}).(func(map[string]any)); ok && f != nil {
		f(meta)
	}
}
