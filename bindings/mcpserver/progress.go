package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
)

// newProgressReporter starts the progress notifications of one run_code
// call: one soon after each change (a call started or finished, a value
// stored with progress(value)), never two within interval of each other,
// and a heartbeat every second (or interval, if longer) while nothing
// changes, so that a client that resets its request timeout on progress
// keeps waiting for a long run (bindings.ProgressThrottle).
//
// Progress is the run's elapsed time in milliseconds (strictly increasing,
// with no total); the message says what happened: "12 calls done (11 ok, 1
// failed), 3 in flight, 2.5s elapsed".
func newProgressReporter(ctx context.Context, ss *mcp.ServerSession, token any, interval time.Duration) *bindings.ProgressThrottle {
	var progress float64
	t := &bindings.ProgressThrottle{Interval: interval, Heartbeat: max(interval, time.Second), OnChange: true,
		Send: func(p bindings.RunProgress, elapsed time.Duration) {
			// MCP requires progress to increase with every notification.
			progress = max(progress+1, float64(elapsed.Milliseconds()))
			_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      progress,
				Message:       p.Text(elapsed),
			})
		}}
	t.Start()
	return t
}
