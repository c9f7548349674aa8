package bindings

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// startCall makes one call through the run's Host as an AsyncHost (the
// way the process tier's pool and the JS engine call it) and returns its
// answer; calls counts how many times done was called. A second call of
// done for one call panics (on the call goroutine: it fails the test
// binary, whichever test runs then).
func startCall(ctx context.Context, host sandbox.Host, tool string, calls *atomic.Int32) (json.RawMessage, error) {
	ah, ok := host.(sandbox.AsyncHost)
	if !ok {
		return nil, sandbox.Errorf(sandbox.EInternal, "", "the run's host is not an AsyncHost")
	}
	type answer struct {
		res json.RawMessage
		err error
	}
	ch := make(chan answer, 2)
	var once atomic.Bool
	ah.StartCall(ctx, tool, json.RawMessage(`{}`), func(res json.RawMessage, err error) {
		if !once.CompareAndSwap(false, true) {
			panic("done called twice for one call of " + tool)
		}
		calls.Add(1)
		ch <- answer{res, err}
	})
	ah.Flush()
	a := <-ch
	return a.res, a.err
}

// TestStartCallAuthorizesAndAnswersOnce: a call started without a waiting
// goroutine goes through the broker's whole path (a denied tool is denied,
// an allowed one answered) and done is called once for each.
func TestStartCallAuthorizesAndAnswersOnce(t *testing.T) {
	one := &tools.Tool{Name: "one", Description: "Returns 1.", InputSchema: open,
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage("1"), nil }}
	var calls atomic.Int32
	exec := funcExec(func(ctx context.Context, _ *sandbox.Job, host sandbox.Host) *sandbox.Outcome {
		res, err := startCall(ctx, host, "one", &calls)
		if err != nil {
			return &sandbox.Outcome{Err: sandbox.AsError(err, "")}
		}
		if _, err := startCall(ctx, host, "nope", &calls); sandbox.AsError(err, "").Code != sandbox.EToolUnknown {
			return &sandbox.Outcome{Err: sandbox.Errorf(sandbox.EInternal, "", fmt.Sprint("unknown tool: got ", err))}
		}
		return &sandbox.Outcome{Value: res}
	})
	r, err := NewRunner(RunnerConfig{Broker: newBroker(t, BrokerConfig{}, one), Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: "x"}})
	if !res.OK || string(res.Result) != "1" {
		t.Fatalf("result %+v", res)
	}
	if res.Calls.Total != 2 || res.Calls.OK != 1 {
		t.Errorf("calls %+v, want 2 counted, 1 ok", res.Calls)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("done called %d times for 2 calls", n)
	}
}

// TestStartCallDoesNotWaitForStuckTool: as TestRunDoesNotWaitForStuckTool,
// through StartCall, with three calls in flight: a cancelled run's calls
// are answered E_CANCELLED while a tool that ignores its context still
// runs, and done is not called again when the tool returns at last
// (startCall panics if it is).
func TestStartCallDoesNotWaitForStuckTool(t *testing.T) {
	const n = 3
	release := make(chan struct{})
	var started, returned sync.WaitGroup
	started.Add(n)
	returned.Add(n)
	stuck := &tools.Tool{Name: "stuck", Description: "Ignores cancellation.", InputSchema: open,
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			started.Done()
			<-release
			defer returned.Done()
			return json.RawMessage("1"), nil
		}}
	var calls atomic.Int32
	exec := funcExec(func(ctx context.Context, _ *sandbox.Job, host sandbox.Host) *sandbox.Outcome {
		errs := make(chan error, n)
		for range n {
			go func() {
				_, err := startCall(ctx, host, "stuck", &calls)
				errs <- err
			}()
		}
		var err error
		for range n {
			e := <-errs
			if sandbox.AsError(e, "").Code != sandbox.ECancelled {
				return &sandbox.Outcome{Err: sandbox.Errorf(sandbox.EInternal, "", fmt.Sprint("a call answered ", e))}
			}
			err = e
		}
		return &sandbox.Outcome{Err: sandbox.AsError(err, "")}
	})
	r, err := NewRunner(RunnerConfig{Broker: newBroker(t, BrokerConfig{}, stuck), Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		started.Wait()
		cancel()
	}()
	res := r.Run(ctx, RunRequest{Program: sandbox.Program{Source: "x"}})
	close(release)
	if res.OK || res.Error.Code != sandbox.ECancelled {
		t.Fatalf("result %+v, want E_CANCELLED", res)
	}
	returned.Wait()
	if got := calls.Load(); got != n {
		t.Errorf("done called %d times for %d calls", got, n)
	}
}
