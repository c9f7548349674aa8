package process

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

func jobOf(principal, src string, timeout time.Duration) *sandbox.Job {
	j := job(src, timeout)
	j.Principal = principal
	return j
}

// pidOf runs "pid" for principal and returns the worker's PID.
func pidOf(t *testing.T, p *Pool, principal string) string {
	t.Helper()
	o := p.Execute(context.Background(), jobOf(principal, "pid", 5*time.Second), &pingHost{})
	if o.Err != nil {
		t.Fatalf("pid for %s: %v", principal, o.Err)
	}
	return string(o.Value)
}

// TestReuseWithinPrincipal: a worker serves up to Reuse jobs of one
// principal, then is discarded.
func TestReuseWithinPrincipal(t *testing.T) {
	p := newPool(t, Config{Size: 1, Reuse: 3})
	first := pidOf(t, p, "a")
	for i := 2; i <= 3; i++ {
		if got := pidOf(t, p, "a"); got != first {
			t.Fatalf("job %d ran in worker %s, want the reused %s", i, got, first)
		}
	}
	if got := pidOf(t, p, "a"); got == first {
		t.Fatalf("job 4 ran in worker %s, which had served its 3 jobs", got)
	}
}

// TestReuseOneIsOneJobPerWorker: Reuse 1 (and the zero value) keep one job
// per worker.
func TestReuseOneIsOneJobPerWorker(t *testing.T) {
	p := newPool(t, Config{Size: 1, Reuse: 1})
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		pid := pidOf(t, p, "a")
		if seen[pid] {
			t.Fatalf("worker %s served two jobs with Reuse 1", pid)
		}
		seen[pid] = true
	}
}

// TestWorkerNeverServesTwoPrincipals: jobs of several principals,
// interleaved and concurrent, never share a worker, while each principal's
// own jobs do.
func TestWorkerNeverServesTwoPrincipals(t *testing.T) {
	p := newPool(t, Config{Size: 2, Reuse: 50})
	var mu sync.Mutex
	owner := map[string]string{} // pid → principal
	reused := map[string]bool{}
	var wg sync.WaitGroup
	for _, who := range []string{"a", "b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 12; i++ {
				o := p.Execute(context.Background(), jobOf(who, "pid", 5*time.Second), &pingHost{})
				if o.Err != nil {
					t.Errorf("%s: %v", who, o.Err)
					return
				}
				pid := string(o.Value)
				mu.Lock()
				if prev, ok := owner[pid]; ok && prev != who {
					t.Errorf("worker %s served %s and %s", pid, prev, who)
				} else if ok {
					reused[who] = true
				}
				owner[pid] = who
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, who := range []string{"a", "b", "c"} {
		if !reused[who] {
			t.Errorf("principal %s never got a worker back: reuse does not happen", who)
		}
	}
}

// TestDiscardAfterAbnormalEnd: after a time-out, a crash, a cancellation or
// a CPU-limit kill the worker is not reused; after a program error it is.
func TestDiscardAfterAbnormalEnd(t *testing.T) {
	p := newPool(t, Config{Size: 1, Reuse: 100, Grace: 50 * time.Millisecond})
	pid := pidOf(t, p, "a")
	// A program's own error is a normal end.
	if o := p.Execute(context.Background(), jobOf("a", "toolerror", 5*time.Second), &pingHost{}); o.Err == nil || o.Err.Code != sandbox.EToolUnknown {
		t.Fatalf("toolerror: %v", o.Err)
	}
	if got := pidOf(t, p, "a"); got != pid {
		t.Fatalf("after a program error: worker %s, want %s reused", got, pid)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tc := range []struct {
		src     string
		timeout time.Duration
		ctx     context.Context
		want    sandbox.Code
	}{
		{"sleep 5s", 300 * time.Millisecond, context.Background(), sandbox.ETimeout},
		{"exit", 5 * time.Second, context.Background(), sandbox.EWorkerCrashed},
		{"sleep 10s", 20 * time.Second, ctx, sandbox.ECancelled},
	} {
		if tc.ctx == ctx {
			time.AfterFunc(100*time.Millisecond, cancel)
		}
		o := p.Execute(tc.ctx, jobOf("a", tc.src, tc.timeout), &pingHost{})
		if o.Err == nil || o.Err.Code != tc.want {
			t.Fatalf("%s: %v, want %s", tc.src, o.Err, tc.want)
		}
		got := pidOf(t, p, "a")
		if got == pid {
			t.Fatalf("after %s (%s) the worker %s was reused", tc.src, tc.want, got)
		}
		pid = got
	}
}

// TestCPULimitPerJob: the supervisor ends a job whose CPU time passes its
// limit (time limit + 1 s) even while its wall-clock deadline is far off.
func TestCPULimitPerJob(t *testing.T) {
	p := newPool(t, Config{Size: 1, Reuse: 10, Grace: time.Minute})
	o := p.Execute(context.Background(), jobOf("a", "spin 4", 200*time.Millisecond), &pingHost{})
	if o.Err == nil || o.Err.Code != sandbox.ETimeout || !strings.Contains(o.Err.Message, "CPU") {
		t.Fatalf("err = %v, want E_TIMEOUT for CPU", o.Err)
	}
}

// TestMaxRSSDiscards: a worker over MaxRSS is not reused.
func TestMaxRSSDiscards(t *testing.T) {
	p := newPool(t, Config{Size: 1, Reuse: 10, MaxRSS: 1})
	if a, b := pidOf(t, p, "a"), pidOf(t, p, "a"); a == b {
		t.Fatalf("worker %s reused past MaxRSS", a)
	}
}

// TestBurstCompletes: 64 concurrent jobs of one principal on a small pool
// all finish: they wait their turn instead of failing with E_BUSY.
func TestBurstCompletes(t *testing.T) {
	p := newPool(t, Config{Size: 2, Reuse: 8})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := p.Execute(context.Background(), jobOf("a", fmt.Sprintf("return %d", i), 5*time.Second), &pingHost{})
			if o.Err != nil || string(o.Value) != fmt.Sprint(i) {
				errs <- fmt.Errorf("job %d: %s %v", i, o.Value, o.Err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestNoRefillStartFailure: a one-shot pool whose worker cannot start fails
// its job at once with E_WORKER_CRASHED and says so, rather than waiting out
// the queue time-out.
func TestNoRefillStartFailure(t *testing.T) {
	p, err := New(Config{Command: []string{"/nonexistent/sandcall-worker"}, Size: 1, NoRefill: true, QueueTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	o := p.Execute(context.Background(), job("return 1", time.Second), &pingHost{})
	if o.Err == nil || o.Err.Code != sandbox.EWorkerCrashed || !p.StartFailed() {
		t.Fatalf("err = %v, StartFailed %v; want E_WORKER_CRASHED and true", o.Err, p.StartFailed())
	}
	if strings.Contains(o.Err.Message, "/nonexistent") {
		t.Errorf("message names a host path: %q", o.Err.Message)
	}
}
