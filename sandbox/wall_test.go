package sandbox_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// TestWallLimitHold: a held wall does not run out; released, it has the time
// it had left when held; a wall linked through the context is held with it.
func TestWallLimitHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		relay := sandbox.NewWall(0, nil)
		ctx, cancel := sandbox.WithWallLimit(sandbox.ContextWithWall(context.Background(), relay), 10*time.Second)
		defer cancel()
		time.Sleep(4 * time.Second) // fake time: the run works 4 s
		release := relay.Hold()     // a person is asked (held through the relay)
		time.Sleep(time.Hour)       // and answers an hour later
		if ctx.Err() != nil {
			t.Fatalf("ran out while held: %v", ctx.Err())
		}
		release()
		release() // idempotent
		time.Sleep(5 * time.Second)
		if ctx.Err() != nil {
			t.Fatalf("ran out after 9 s of work: %v", ctx.Err())
		}
		hold := sandbox.HoldWall(ctx) // held directly, as the broker does in-process
		time.Sleep(time.Minute)
		hold()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if ctx.Err() != context.DeadlineExceeded {
			t.Fatalf("after 11 s of work: %v, want DeadlineExceeded", ctx.Err())
		}
		child, stop := context.WithCancel(ctx)
		defer stop()
		if child.Err() != context.DeadlineExceeded {
			t.Errorf("a derived context ends with %v", child.Err())
		}
	})
}

// TestWallLimitCancel: the parent's cancellation is the context's error.
func TestWallLimitCancel(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	ctx, cancel := sandbox.WithWallLimit(parent, time.Hour)
	defer cancel()
	cancelParent()
	<-ctx.Done()
	if ctx.Err() != context.Canceled {
		t.Errorf("err %v, want Canceled", ctx.Err())
	}
}
