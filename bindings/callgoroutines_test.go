package bindings

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// A call blocked in its tool holds only its own goroutine: the next call
// runs on another one, however many are blocked (a bounded set of call
// goroutines would deadlock a program whose calls wait for each other).
// Once the calls are over, their goroutines end.
func TestCallGoroutinesNeverQueue(t *testing.T) {
	before := runtime.NumGoroutine()
	release := make(chan struct{})
	var blocked sync.WaitGroup
	const n = 20
	for range n {
		blocked.Add(1)
		goCall(func() { blocked.Done(); <-release })
	}
	blocked.Wait() // all n run at once
	ran := make(chan struct{})
	goCall(func() { close(ran) })
	<-ran
	close(release)

	// Reused: calls one after another keep finding an idle goroutine.
	for range 100 {
		done := make(chan struct{})
		goCall(func() { close(done) })
		<-done
	}
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("%d goroutines %s after the calls, %d before", g, 30*time.Second, before)
	}
}
