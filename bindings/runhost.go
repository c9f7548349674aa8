package bindings

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

var (
	_ sandbox.Host        = (*runHost)(nil)
	_ sandbox.PartialSink = (*runHost)(nil)
	_ sandbox.AsyncHost   = (*runHost)(nil)
)

// runHost is the Host a program runs against: the broker's per-run state,
// which authorizes and performs each call, plus what the runner tracks for
// progress reports and partial results.
type runHost struct {
	*run
	report func(RunProgress)

	inflight atomic.Int64

	mu       sync.Mutex // guards seq, partial, partials, calls and progress
	seq      uint64
	partial  json.RawMessage
	partials int
	// calls numbers the calls; progress holds, for each call in flight,
	// what its tool last reported of its progress (nil: nothing yet).
	calls    uint64
	progress map[uint64]*ToolProgress

	groupMu sync.Mutex
	group   *startedGroup // of the latest context StartCall was given
}

// track registers a call in flight and returns its context, under which
// the tool's progress reports (tools.ReportProgress) reach the run's
// progress, and the function that ends the registration.
func (h *runHost) track(ctx context.Context, tool string) (context.Context, func()) {
	if h.report == nil {
		return ctx, func() {}
	}
	h.mu.Lock()
	h.calls++
	id := h.calls
	if h.progress == nil {
		h.progress = make(map[uint64]*ToolProgress)
	}
	h.progress[id] = nil
	h.mu.Unlock()
	name := safeName(tool)
	ctx = tools.WithProgress(ctx, func(p tools.Progress) {
		h.mu.Lock()
		if _, ok := h.progress[id]; !ok {
			h.mu.Unlock()
			return // the call has returned: too late
		}
		h.progress[id] = &ToolProgress{Tool: name, Progress: p.Progress, Total: p.Total,
			Message: sandbox.Cap(tools.Visible(p.Message), 80)}
		h.mu.Unlock()
		h.notify()
	})
	return ctx, func() {
		h.mu.Lock()
		delete(h.progress, id)
		h.mu.Unlock()
	}
}

// toolProgress returns what the calls in flight reported, oldest first.
// h.mu is held.
func (h *runHost) toolProgress() []ToolProgress {
	var ids []uint64
	for id, p := range h.progress {
		if p != nil {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	out := make([]ToolProgress, 0, min(len(ids), MaxToolProgress))
	for _, id := range ids[:min(len(ids), MaxToolProgress)] {
		out = append(out, *h.progress[id])
	}
	return out
}

// Call implements sandbox.Host, counting the call in flight around the
// broker's path. When ctx ends first (the run was cancelled or timed out)
// and the call has not returned abandonGrace later, Call returns
// E_CANCELLED rather than wait for a tool handler that does not honour its
// context: the engine waits for its calls before it reports, and a run must
// end promptly whatever its tools do. Such a call finishes in the
// background; it is audited when it returns, too late to be counted in the
// Result.
func (h *runHost) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	h.inflight.Add(1)
	h.notify()
	type answer struct {
		res json.RawMessage
		err error
	}
	ch := make(chan answer, 1)
	cctx, untrack := h.track(ctx, tool)
	seq := h.run.issueFor(tool)
	goCall(func() { // a reused goroutine (callgoroutines.go)
		res, err := h.run.callIssued(cctx, seq, tool, args)
		untrack()
		h.inflight.Add(-1)
		h.notify()
		ch <- answer{res, err}
	})
	select {
	case a := <-ch:
		return a.res, a.err
	case <-ctx.Done():
		// A handler that honours its context returns within microseconds:
		// wait a little, so that its call is counted.
		t := time.NewTimer(abandonGrace)
		defer t.Stop()
		select {
		case a := <-ch:
			return a.res, a.err
		case <-t.C:
			h.b.cfg.Logger.Warn("a tool call did not return after its run ended; not waiting for it",
				"run_id", h.id, "tool", safeName(tool))
			return nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled)
		}
	}
}

// abandonGrace is how long a call may take to return once its run has
// ended before the run stops waiting for it.
const abandonGrace = 50 * time.Millisecond

// StartCall implements sandbox.AsyncHost: Call without a goroutine of the
// caller's waiting for the answer. done gets the call's result on the call
// goroutine that ran it or, when ctx ends first and the call has not
// returned abandonGrace later, E_CANCELLED (the call then finishes in the
// background, as with Call).
func (h *runHost) StartCall(ctx context.Context, tool string, args json.RawMessage, done func(json.RawMessage, error)) {
	h.inflight.Add(1)
	h.notify()
	cctx, untrack := h.track(ctx, tool)
	c := &startedCall{tool: tool, done: done}
	h.startedUnder(ctx, c)
	seq := h.run.issueFor(tool) // here, in the program's order
	goCall(func() {
		res, err := h.run.callIssued(cctx, seq, tool, args)
		untrack()
		h.inflight.Add(-1)
		h.notify()
		c.answer(res, err)
	})
}

// startedCall is a call made through StartCall: answered once, by
// whichever comes first, the call or its abandonment.
type startedCall struct {
	answered atomic.Bool
	tool     string
	done     func(json.RawMessage, error)
}

func (c *startedCall) answer(res json.RawMessage, err error) bool {
	if !c.answered.CompareAndSwap(false, true) {
		return false
	}
	c.done(res, err)
	return true
}

// startedGroup holds the calls started under one context (one Done
// channel: the engine or the pool passes the same one for every call of a
// run), so that one context.AfterFunc per context, not one per call,
// abandons those still running abandonGrace after it ends.
type startedGroup struct {
	done  <-chan struct{}
	mu    sync.Mutex
	calls []*startedCall
	ended bool // the context has ended: a call started now is on its own
}

// startedUnder registers c with the group of ctx.
func (h *runHost) startedUnder(ctx context.Context, c *startedCall) {
	dc := ctx.Done()
	if dc == nil {
		return // a context that never ends: nothing to abandon
	}
	h.groupMu.Lock()
	g := h.group
	if g == nil || g.done != dc {
		g = &startedGroup{done: dc}
		h.group = g
		context.AfterFunc(ctx, func() {
			// Usually every call has been answered by then: no timer.
			g.mu.Lock()
			g.ended = true
			g.calls = slices.DeleteFunc(g.calls, func(c *startedCall) bool { return c.answered.Load() })
			running := len(g.calls) > 0
			g.mu.Unlock()
			if running {
				time.AfterFunc(abandonGrace, func() { h.abandon(ctx, g) })
			}
		})
	}
	h.groupMu.Unlock()
	g.mu.Lock()
	if g.ended { // started after the context ended: on its own
		g.mu.Unlock()
		late := &startedGroup{calls: []*startedCall{c}}
		time.AfterFunc(abandonGrace, func() { h.abandon(ctx, late) })
		return
	}
	if len(g.calls) == cap(g.calls) && len(g.calls) >= 64 {
		// Drop the answered ones before the slice grows.
		g.calls = slices.DeleteFunc(g.calls, func(c *startedCall) bool { return c.answered.Load() })
	}
	g.calls = append(g.calls, c)
	g.mu.Unlock()
}

// abandon answers the calls of g still running E_CANCELLED.
func (h *runHost) abandon(ctx context.Context, g *startedGroup) {
	g.mu.Lock()
	calls := g.calls
	g.calls = nil
	g.mu.Unlock()
	for _, c := range calls {
		if c.answer(nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled)) {
			h.b.cfg.Logger.Warn("a tool call did not return after its run ended; not waiting for it",
				"run_id", h.id, "tool", safeName(c.tool))
		}
	}
}

// Flush implements sandbox.AsyncHost: StartCall holds nothing back.
func (h *runHost) Flush() {}

// Partial implements sandbox.PartialSink: the last value stored wins.
func (h *runHost) Partial(value json.RawMessage) {
	h.mu.Lock()
	h.partial = bytes.Clone(value)
	h.partials++
	h.mu.Unlock()
	h.notify()
}

// lastPartial returns the last value stored, or nil.
func (h *runHost) lastPartial() json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.partial
}

// notify reports a snapshot, if anyone listens.
func (h *runHost) notify() {
	if h.report == nil {
		return
	}
	h.mu.Lock()
	h.seq++
	p := RunProgress{Seq: h.seq, Calls: h.snapshot(), InFlight: int(h.inflight.Load()),
		Elapsed: time.Since(h.start), Partials: h.partials, PartialBytes: len(h.partial),
		Tools: h.toolProgress()}
	h.mu.Unlock()
	h.report(p)
}
