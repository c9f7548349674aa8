package process

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// sched shares the pool's running slots and its queue between principals.
//
// It is work-conserving: a job runs at once while fewer than max jobs run,
// whoever submitted it, so one principal alone may use the whole pool. When
// every slot is taken, jobs wait in one queue of at most queueCap; a slot
// that frees goes to the waiting principal with the fewest jobs running
// (the oldest waiter among equals), so a principal flooding the pool gets
// the next slot only when no one running less waits. When the queue is full,
// a newcomer whose principal waits with fewer jobs than the principal with
// the most waiting takes the place of that principal's newest waiter (which
// gets E_BUSY): one principal cannot fill the queue against the others.
//
// It also keeps the idle workers of each principal (Config.Reuse): a worker
// that served a principal is only ever handed to that principal again.
type sched struct {
	max      int // jobs running at once
	queueCap int // jobs waiting at most
	idleCap  int // idle used workers kept, all principals together

	mu      sync.Mutex
	running int
	waiting int
	seq     uint64
	byP     map[string]*pstate
	idle    []*worker // every idle used worker, oldest first
}

// pstate is one principal's share.
type pstate struct {
	running int
	waiters []*waiter // FIFO
	idle    []*worker // this principal's idle workers, most recent last
}

type waiter struct {
	principal string
	seq       uint64
	done      chan struct{} // closed when granted or evicted
	granted   bool
	evicted   bool
}

func newSched(max, queueCap, idleCap int) *sched {
	return &sched{max: max, queueCap: queueCap, idleCap: idleCap, byP: make(map[string]*pstate)}
}

func (s *sched) state(principal string) *pstate {
	ps := s.byP[principal]
	if ps == nil {
		ps = &pstate{}
		s.byP[principal] = ps
	}
	return ps
}

// forget drops a principal's state once it holds nothing.
func (s *sched) forget(principal string) {
	if ps := s.byP[principal]; ps != nil && ps.running == 0 && len(ps.waiters) == 0 && len(ps.idle) == 0 {
		delete(s.byP, principal)
	}
}

// admit takes a running slot for principal, waiting in the queue for at
// most timeout. On success the caller must call done(principal) when the
// job ends.
func (s *sched) admit(ctx, poolCtx context.Context, principal string, timeout time.Duration) *sandbox.Error {
	s.mu.Lock()
	ps := s.state(principal)
	if s.running < s.max {
		s.running++
		ps.running++
		s.mu.Unlock()
		return nil
	}
	if s.waiting >= s.queueCap {
		victim := s.fullestQueue()
		if victim == nil || victim == ps || len(victim.waiters) <= len(ps.waiters)+1 {
			s.forget(principal)
			s.mu.Unlock()
			if s.queueCap == 0 {
				return busy("every worker is busy")
			}
			return busy("every worker is busy and the queue is full")
		}
		// The newest waiter of the principal holding the most places
		// makes room.
		w := victim.waiters[len(victim.waiters)-1]
		victim.waiters = victim.waiters[:len(victim.waiters)-1]
		s.waiting--
		w.evicted = true
		close(w.done)
	}
	s.seq++
	w := &waiter{principal: principal, seq: s.seq, done: make(chan struct{})}
	ps.waiters = append(ps.waiters, w)
	s.waiting++
	s.mu.Unlock()

	t := time.NewTimer(timeout)
	defer t.Stop()
	var err *sandbox.Error
	select {
	case <-w.done:
	case <-t.C:
		err = busy(fmt.Sprintf("no worker became free within %s", timeout))
	case <-ctx.Done():
		err = sandbox.AsError(ctx.Err(), sandbox.ECancelled)
	case <-poolCtx.Done():
		err = sandbox.Errorf(sandbox.ECancelled, "", "the server is shutting down")
	}
	s.mu.Lock()
	switch {
	case w.granted:
		if err == nil {
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
		s.done(principal) // granted as it gave up: pass the slot on
		return err
	case w.evicted:
		s.forget(principal)
		s.mu.Unlock()
		return busy("other callers are waiting; this caller holds more than its share of the queue")
	}
	// Still waiting: leave the queue.
	for i, x := range ps.waiters {
		if x == w {
			ps.waiters = append(ps.waiters[:i], ps.waiters[i+1:]...)
			s.waiting--
			break
		}
	}
	s.forget(principal)
	s.mu.Unlock()
	return err
}

// fullestQueue returns the principal with the most waiters, or nil.
func (s *sched) fullestQueue() *pstate {
	var best *pstate
	for _, ps := range s.byP {
		if len(ps.waiters) > 0 && (best == nil || len(ps.waiters) > len(best.waiters)) {
			best = ps
		}
	}
	return best
}

// done returns principal's slot and grants the freed slots to waiters:
// each to the waiting principal with the fewest jobs running.
func (s *sched) done(principal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.byP[principal]
	s.running--
	ps.running--
	s.forget(principal)
	for s.running < s.max && s.waiting > 0 {
		var next *pstate
		for _, q := range s.byP {
			if len(q.waiters) == 0 {
				continue
			}
			if next == nil || q.running < next.running ||
				(q.running == next.running && q.waiters[0].seq < next.waiters[0].seq) {
				next = q
			}
		}
		w := next.waiters[0]
		next.waiters = next.waiters[1:]
		s.waiting--
		s.running++
		next.running++
		w.granted = true
		close(w.done)
	}
}

// takeIdle returns an idle worker that served principal, or nil.
func (s *sched) takeIdle(principal string) *worker {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.byP[principal]
	for ps != nil && len(ps.idle) > 0 {
		w := ps.idle[len(ps.idle)-1]
		ps.idle = ps.idle[:len(ps.idle)-1]
		s.dropIdle(w)
		select {
		case <-w.exited: // died while idle
			go w.release()
			continue
		default:
		}
		return w
	}
	return nil
}

// putIdle keeps w, which has served principal, for its next job. It
// returns the idle workers to discard (the oldest, past idleCap).
func (s *sched) putIdle(principal string, w *worker) (discard []*worker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.state(principal)
	w.idleSince = time.Now()
	ps.idle = append(ps.idle, w)
	s.idle = append(s.idle, w)
	return s.trimIdle(s.idleCap, time.Time{})
}

// expire returns the idle workers kept since before cutoff, to discard.
func (s *sched) expire(cutoff time.Time) []*worker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trimIdle(s.idleCap, cutoff)
}

// trimIdle removes the oldest idle workers until at most n remain and none
// has been idle since before cutoff; it returns them.
func (s *sched) trimIdle(n int, cutoff time.Time) (discard []*worker) {
	for len(s.idle) > 0 && (len(s.idle) > n || s.idle[0].idleSince.Before(cutoff)) {
		old := s.idle[0]
		s.dropIdle(old)
		if q := s.byP[old.principal]; q != nil {
			for i, x := range q.idle {
				if x == old {
					q.idle = append(q.idle[:i], q.idle[i+1:]...)
					break
				}
			}
			s.forget(old.principal)
		}
		discard = append(discard, old)
	}
	return discard
}

func (s *sched) dropIdle(w *worker) {
	for i, x := range s.idle {
		if x == w {
			s.idle = append(s.idle[:i], s.idle[i+1:]...)
			return
		}
	}
}

func busy(msg string) *sandbox.Error {
	return sandbox.Errorf(sandbox.EBusy, "Try again in a moment; the server is at capacity.", msg)
}
