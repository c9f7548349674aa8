package process

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// lateAfterFunc is context.AfterFunc under the schedule that lets a job's
// outcome reach the pool before the kill its cancellation sets off: once
// ctx is done, stop reports that f has started (as the real one does), but
// f runs only when fire is closed; ran counts the functions that ran.
type lateAfterFunc struct {
	fire chan struct{}
	ran  sync.WaitGroup
}

func (l *lateAfterFunc) afterFunc(ctx context.Context, f func()) func() bool {
	if ctx.Done() == nil { // never done: nothing to run
		return func() bool { return true }
	}
	var mu sync.Mutex
	stopped := false
	l.ran.Add(1)
	go func() {
		defer l.ran.Done()
		select {
		case <-ctx.Done():
		case <-l.fire:
		}
		<-l.fire
		mu.Lock()
		run := !stopped && ctx.Err() != nil
		mu.Unlock()
		if run {
			f()
		}
	}()
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil || stopped {
			return false // started (or stopped before)
		}
		stopped = true
		return true
	}
}

// cancelHost cancels the job's context in its call "cancel_me" (as a
// suspended run does); in "gate" it lets the late functions run and waits
// until they have.
type cancelHost struct {
	cancel context.CancelFunc
	late   *lateAfterFunc
}

func (h cancelHost) Call(_ context.Context, tool string, _ json.RawMessage) (json.RawMessage, error) {
	switch tool {
	case "cancel_me":
		h.cancel()
		return nil, sandbox.Errorf(sandbox.ECancelled, "", "the run waits for a person's approval")
	case "gate":
		close(h.late.fire)
		h.late.ran.Wait()
		return json.RawMessage("1"), nil
	}
	return nil, sandbox.Errorf(sandbox.EToolUnknown, "", "no tool "+tool)
}

// TestCancelledJobsWorkerNotReused: a job whose context is cancelled
// during a call, and whose program carries on and ends normally (its
// outcome reaching the pool before the kill the cancellation set off),
// does not leave its worker to the principal's next job, which that kill
// would end E_CANCELLED with no call made (a suspended run's replay did,
// TestApprovalWasmBinary/wasm_replay, one run in about forty under load).
func TestCancelledJobsWorkerNotReused(t *testing.T) {
	p := newPool(t, Config{Size: 1, Reuse: 4})
	late := &lateAfterFunc{fire: make(chan struct{})}
	p.afterFunc = late.afterFunc
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := cancelHost{cancel: cancel, late: late}
	if o := p.Execute(ctx, jobOf("a", "swallow cancel_me", 10*time.Second), h); o.Err != nil || string(o.Value) != "1" {
		t.Fatalf("first job: %+v", o)
	}
	// The principal's next job: while it runs, the first job's
	// cancellation lands.
	if o := p.Execute(context.Background(), jobOf("a", "swallow gate", 10*time.Second), h); o.Err != nil || string(o.Value) != "1" {
		t.Fatalf("the next job of the principal, while the first one's cancellation lands: %v", o.Err)
	}
}
