package mcpserver_test

import (
	"context"
	"strings"

	"github.com/sandcall/sandcall/sandbox"
)

// panicExecutor is an engine with a bug: it panics. It is fault injection for
// the recovery path, not a stand-in for the real engine.
type panicExecutor struct{ sandbox.Executor }

func (p panicExecutor) Execute(ctx context.Context, job *sandbox.Job, h sandbox.Host) *sandbox.Outcome {
	if strings.Contains(job.Program.Source, "PANIC_IN_ENGINE") {
		panic("engine bug")
	}
	return p.Executor.Execute(ctx, job, h)
}
