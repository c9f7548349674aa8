package tools

import "context"

// Progress is what a tool reports about a call while it runs: an upstream
// MCP server's notifications/progress (progress of total, when total is
// known, and a message).
type Progress struct {
	Progress float64
	Total    float64 // 0: unknown
	Message  string  // untrusted text: a listener escapes and caps it
}

type progressKey struct{}

// WithProgress returns a context under which a handler's ReportProgress
// calls reach f: the runner sets it for each call of a program, so that
// the run's own progress says how far its slow calls are. f may be called
// from any goroutine and must not block.
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// ReportProgress hands p to whoever listens for the call's progress (see
// WithProgress); without a listener it does nothing.
func ReportProgress(ctx context.Context, p Progress) {
	if f, ok := ctx.Value(progressKey{}).(func(Progress)); ok && f != nil {
		f(p)
	}
}

// WantsProgress reports whether ctx has a progress listener (WithProgress):
// a handler asks its tool for progress reports only then.
func WantsProgress(ctx context.Context) bool {
	f, ok := ctx.Value(progressKey{}).(func(Progress))
	return ok && f != nil
}
