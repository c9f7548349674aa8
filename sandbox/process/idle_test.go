package process

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// TestIdleWorkerReleasesMemory: a worker gives back its memory once it has
// waited IdleRelease for a job, when ready and again after each job, and
// not while a job keeps it busy; a worker with KeepWarmGarbage never does.
func TestIdleWorkerReleasesMemory(t *testing.T) {
	released := make(chan struct{}, 4)
	old := releaseIdle
	releaseIdle = func() { released <- struct{}{} }
	t.Cleanup(func() { releaseIdle = old })
	for _, keep := range []bool{false, true} {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- ServeWorker(ctx, inR, outW, WorkerConfig{Executor: scriptExec{}, IdleRelease: time.Millisecond, KeepWarmGarbage: keep})
		}()
		if k, _, err := readFrame(outR, MaxWorkerFrame); err != nil || k != kindReady {
			t.Fatalf("ready: %c %v", k, err)
		}
		if !keep {
			<-released // idle once ready
		}
		body, _ := encodeJob(&sandbox.Job{RunID: "t", Program: sandbox.Program{Source: "ok"}, Limits: sandbox.Limits{Timeout: time.Second}.Resolve()})
		if err := writeFrame(inW, kindJob, body); err != nil {
			t.Fatal(err)
		}
		if k, _, err := readFrame(outR, MaxWorkerFrame); err != nil || k != kindOutcome {
			t.Fatalf("outcome: %c %v", k, err)
		}
		if !keep {
			<-released // idle again after the job
		}
		cancel()
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-done
		select {
		case <-released:
			t.Errorf("keep=%v: released more than once per idle period", keep)
		default:
		}
	}
}
