package process

import (
	"sync"
	"time"
)

// answers gathers the results of one job's tool calls on the server's side,
// so that the answers to a batch of calls (the calls a guest started in one
// turn of its event loop, which arrive in one write) leave in few writes,
// not one each: every write wakes the worker, which then reads, hands the
// result to its engine and parks again. A result is held while other calls
// of the job are in flight or still being read, and only so long: the held
// results leave when none is left in flight, when they reach holdBytes, or
// holdFor after the first of them was held, whichever comes first. A slow
// call (an upstream server, a person's approval) thus delays the others'
// answers by holdFor at most.
type answers struct {
	fw   *frameWriter
	hold time.Duration // holdFor, but for tests

	mu       sync.Mutex
	inflight int  // calls read and not yet answered
	reading  bool // more call frames are buffered, not yet read
	parts    [][]byte
	bytes    int
	timer    *time.Timer
	ended    bool
}

// Bounds of a held batch of answers. holdBytes stays under a pipe's
// default capacity (64 KiB), so that the write of a batch does not wait
// for the worker to read part of it first.
const (
	holdFor   = 100 * time.Microsecond
	holdBytes = 32 << 10
)

func newAnswers(fw *frameWriter) *answers { return &answers{fw: fw, hold: holdFor} }

// started counts a call read from the worker; more reports whether further
// frames are buffered behind it (the rest of the batch: the answers then
// wait for those calls to be read, too).
func (a *answers) started(more bool) {
	a.mu.Lock()
	a.inflight++
	a.reading = more
	a.mu.Unlock()
}

// answer queues the result of call id; the payload is not copied, so the
// caller must not change it.
func (a *answers) answer(id uint64, isErr bool, payload []byte) {
	h := resultHeader(id, isErr, len(payload))
	a.mu.Lock()
	a.inflight--
	a.parts = append(a.parts, h[:], payload)
	a.bytes += len(h) + len(payload)
	var out [][]byte
	switch {
	case a.ended, a.bytes >= holdBytes, a.inflight == 0 && !a.reading:
		out = a.takeLocked()
	case a.timer == nil:
		a.timer = time.AfterFunc(a.hold, a.flush)
	}
	a.mu.Unlock()
	a.send(out)
}

func (a *answers) flush() {
	a.mu.Lock()
	out := a.takeLocked()
	a.mu.Unlock()
	a.send(out)
}

// takeLocked takes the held answers (a.mu is held).
func (a *answers) takeLocked() [][]byte {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
	out := a.parts
	a.parts, a.bytes = nil, 0
	return out
}

// send writes answers in one piece (outside a.mu: a write may wait for the
// worker to read; answers taken by two goroutines may leave in either
// order, which the worker does not mind).
func (a *answers) send(out [][]byte) {
	if len(out) > 0 {
		_ = a.fw.sendNow(qframe{parts: out})
	}
}

// end sends what is held and, from now on, every answer at once (the
// calls of a job that has ended are answered as they return).
func (a *answers) end() {
	a.mu.Lock()
	a.ended = true
	out := a.takeLocked()
	a.mu.Unlock()
	a.send(out)
}
