package bindings

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// TestRunDoesNotWaitForStuckTool: a cancelled run ends while a tool that
// ignores its context is still running (the tool is released only after
// Run returns, so waiting for it would deadlock).
func TestRunDoesNotWaitForStuckTool(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	stuck := &tools.Tool{Name: "stuck", Description: "Ignores cancellation.", InputSchema: open,
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			close(started)
			<-release
			return json.RawMessage("1"), nil
		}}
	exec := funcExec(func(ctx context.Context, _ *sandbox.Job, host sandbox.Host) *sandbox.Outcome {
		_, err := host.Call(ctx, "stuck", nil)
		return &sandbox.Outcome{Err: sandbox.AsError(err, "")}
	})
	r, err := NewRunner(RunnerConfig{Broker: newBroker(t, BrokerConfig{}, stuck), Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	res := r.Run(ctx, RunRequest{Program: sandbox.Program{Source: "x"}})
	close(release)
	if res.OK || res.Error.Code != sandbox.ECancelled {
		t.Fatalf("result %+v, want E_CANCELLED", res)
	}
}
