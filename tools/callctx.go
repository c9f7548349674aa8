package tools

import "context"

// A CallContext is what the broker knows of the call a tool's Handler is
// serving (bindings.CallInfo): who calls, for what principal and run. It is
// attached to the context the Handler receives (WithCall), so that a tool
// below the broker, an upstream server's proxy say, can tell who calls
// without importing the layer above.
type CallContext interface {
	// CallerOf is who makes the call: Direct or Code.
	CallerOf() Caller
}

type callKey struct{}

// WithCall returns ctx carrying c, the call a Handler receives ctx for.
func WithCall(ctx context.Context, c CallContext) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFrom returns the call ctx was made for, if a broker attached one.
func CallFrom(ctx context.Context) (CallContext, bool) {
	c, ok := ctx.Value(callKey{}).(CallContext)
	return c, ok
}

// CallerFrom returns who makes the call ctx was made for; ok is false
// outside a broker call.
func CallerFrom(ctx context.Context) (c Caller, ok bool) {
	cc, ok := CallFrom(ctx)
	if !ok {
		return "", false
	}
	return cc.CallerOf(), true
}
