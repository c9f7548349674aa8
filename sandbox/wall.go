package sandbox

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Wall is a run's wall-time limit that stops while the run waits for a
// person: a tool call that needs an approval holds it (HoldWall) for as long
// as the person takes, so the deadline moves by the time spent waiting and
// the run's own work keeps its whole limit. The wait itself is bounded
// elsewhere (the broker's approval timeout).
//
// A Wall may carry linked walls (the engine's, below the supervisor's in the
// process tier): holding a wall holds the walls linked to it.
type Wall struct {
	mu       sync.Mutex
	limit    time.Duration
	timer    *time.Timer // nil when the wall has no limit or is held
	deadline time.Time   // while running
	left     time.Duration
	holds    int
	expired  bool
	stopped  bool
	fire     func()
	onHold   func(held bool)
	linked   []*Wall
}

// NewWall starts a wall of limit that calls fire (once, on its own
// goroutine) when it runs out. A limit <= 0 never runs out: such a wall only
// relays holds to the walls linked to it.
func NewWall(limit time.Duration, fire func()) *Wall {
	w := &Wall{limit: limit, fire: fire, left: limit}
	if limit > 0 {
		w.deadline = time.Now().Add(limit)
		w.timer = time.AfterFunc(limit, w.expire)
	}
	return w
}

// OnHold sets a function called (with the wall's lock held, so calls are
// ordered) when the wall becomes held (true) and when it runs again (false).
func (w *Wall) OnHold(f func(held bool)) {
	w.mu.Lock()
	w.onHold = f
	w.mu.Unlock()
}

func (w *Wall) expire() {
	w.mu.Lock()
	if w.holds > 0 || w.stopped || w.expired {
		w.mu.Unlock()
		return
	}
	w.expired = true
	w.mu.Unlock()
	if w.fire != nil {
		w.fire()
	}
}

// Hold stops the wall until release is called (release is idempotent).
// Holds nest: the wall runs again when the last one is released.
func (w *Wall) Hold() (release func()) {
	w.hold()
	var once sync.Once
	return func() { once.Do(w.release) }
}

func (w *Wall) hold() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.holds++
	if w.holds > 1 {
		return
	}
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
		w.left = max(time.Until(w.deadline), 0)
	}
	for _, l := range w.linked {
		l.hold()
	}
	if w.onHold != nil {
		w.onHold(true)
	}
}

func (w *Wall) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.holds == 0 {
		return
	}
	w.holds--
	if w.holds > 0 {
		return
	}
	if w.limit > 0 && !w.stopped && !w.expired {
		w.deadline = time.Now().Add(w.left)
		w.timer = time.AfterFunc(w.left, w.expire)
	}
	for _, l := range w.linked {
		l.release()
	}
	if w.onHold != nil {
		w.onHold(false)
	}
}

// Held reports whether the wall is held.
func (w *Wall) Held() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.holds > 0
}

// Deadline returns the time the wall runs out if nothing holds it from now
// on; ok is false for a wall without a limit or one held now.
func (w *Wall) Deadline() (t time.Time, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.limit <= 0 || w.holds > 0 {
		return time.Time{}, false
	}
	return w.deadline, true
}

// Stop stops the wall for good; it never fires afterwards.
func (w *Wall) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}

// link makes holds of w hold l too, from now on.
func (w *Wall) link(l *Wall) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.linked = append(w.linked, l)
	if w.holds > 0 {
		l.hold()
	}
}

type wallKey struct{}

// ContextWithWall returns ctx carrying w, for HoldWall.
func ContextWithWall(ctx context.Context, w *Wall) context.Context {
	return context.WithValue(ctx, wallKey{}, w)
}

// HoldWall holds the wall ctx carries, if any, until release is called: a
// host calls it around a wait that is not the run's own work (a person's
// approval).
func HoldWall(ctx context.Context) (release func()) {
	if w, ok := ctx.Value(wallKey{}).(*Wall); ok {
		return w.Hold()
	}
	return func() {}
}

// WithWallLimit is context.WithTimeout for a run's wall time, with a
// deadline that a hold moves (see Wall): the context ends with
// context.DeadlineExceeded when the wall runs out, and carries the wall for
// HoldWall. A wall that parent carries (a worker's, relaying the
// supervisor's holds) holds this one too. Engines use it for Limits.Timeout.
func WithWallLimit(parent context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	c := &wallCtx{parent: parent, done: make(chan struct{})}
	c.w = NewWall(limit, func() { c.end(context.DeadlineExceeded) })
	if pw, ok := parent.Value(wallKey{}).(*Wall); ok {
		pw.link(c.w)
	}
	stop := context.AfterFunc(parent, func() { c.end(parent.Err()) })
	return c, func() {
		stop()
		c.w.Stop()
		c.end(context.Canceled)
	}
}

// wallCtx is the context of WithWallLimit. It has its own done channel, so
// contexts derived from it take their error from its Err.
type wallCtx struct {
	parent context.Context
	w      *Wall
	done   chan struct{}
	mu     sync.Mutex            // serializes end
	err    atomic.Pointer[error] // read without the lock: engines poll Err
}

func (c *wallCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err.Load() != nil {
		return
	}
	c.err.Store(&err)
	close(c.done)
}

func (c *wallCtx) Deadline() (time.Time, bool) {
	t, ok := c.w.Deadline()
	if pt, pok := c.parent.Deadline(); pok && (!ok || pt.Before(t)) {
		return pt, true
	}
	return t, ok
}

func (c *wallCtx) Done() <-chan struct{} { return c.done }

func (c *wallCtx) Err() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (c *wallCtx) Value(key any) any {
	if key == (wallKey{}) {
		return c.w
	}
	return c.parent.Value(key)
}
