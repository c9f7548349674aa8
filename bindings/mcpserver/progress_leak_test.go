package mcpserver_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox"
)

// panicky is an Executor that panics, as a bug in an engine would.
type panicky struct{}

func (panicky) Execute(context.Context, *sandbox.Job, sandbox.Host) *sandbox.Outcome {
	panic("engine bug")
}

// TestProgressStopsWhenRunPanics: the progress reporter of a run_code
// call stops with the call even when the run panics (the server answers
// E_INTERNAL): no reporter goroutine outlives its call to beat forever.
func TestProgressStopsWhenRunPanics(t *testing.T) {
	h := newHarness(t, options{progress: time.Millisecond,
		exec: func(sandbox.Executor) sandbox.Executor { return panicky{} }})
	params := &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `return 1`}}
	params.SetProgressToken(1)
	res, err := h.cs.CallTool(context.Background(), params)
	if err != nil || !res.IsError {
		t.Fatalf("run: %v %v", err, res)
	}
	wantCode(t, res, sandbox.EInternal)
	var stacks string
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "ProgressThrottle).loop") {
			return
		}
	}
	t.Fatal("a progress reporter is still running after its call ended")
}
