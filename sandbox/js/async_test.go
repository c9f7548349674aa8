package js

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// asyncHost is a sandbox.AsyncHost that answers nothing until release is
// called; a cancelled call is answered with the cancellation at once, as
// the contract says. Call must not be used.
type asyncHost struct {
	t       *testing.T
	mu      sync.Mutex
	started []func(json.RawMessage, error)
	args    []string
	all     chan struct{} // closed when want calls have started and been flushed
	closed  bool
	want    int
	flushes int
}

func (h *asyncHost) Call(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	h.t.Error("the engine called Call on an AsyncHost")
	return nil, sandbox.Errorf(sandbox.EInternal, "", "Call on an AsyncHost")
}

// Flush releases the calls started so far: all is closed only once want
// calls have started and been flushed, so an engine that never flushed
// would wait for answers that never come.
func (h *asyncHost) Flush() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flushes++
	if len(h.started) == h.want && !h.closed {
		h.closed = true
		close(h.all)
	}
}

func (h *asyncHost) StartCall(ctx context.Context, tool string, args json.RawMessage, done func(json.RawMessage, error)) {
	var once sync.Once
	answer := func(res json.RawMessage, err error) { once.Do(func() { done(res, err) }) }
	context.AfterFunc(ctx, func() { answer(nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled)) })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.started = append(h.started, answer)
	h.args = append(h.args, string(args))
}

// release answers every started call, the last first, each with its
// arguments' n doubled, from goroutines of its own.
func (h *asyncHost) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.started) - 1; i >= 0; i-- {
		var a struct{ N int }
		_ = json.Unmarshal([]byte(h.args[i]), &a)
		go h.started[i](json.RawMessage(strconv.Itoa(2*a.N)), nil)
	}
}

// The engine starts a guest's calls through StartCall when its host has
// it (no goroutine of its own per call), all of Promise.all's at once,
// flushes them in one go before it waits, and takes the answers in
// whatever order they come.
func TestAsyncHostCalls(t *testing.T) {
	h := &asyncHost{t: t, all: make(chan struct{}), want: 5}
	go func() {
		<-h.all
		h.release()
	}()
	job := &sandbox.Job{Program: sandbox.Program{Source: `
		const rs = await Promise.all([1, 2, 3, 4, 5].map((n) => tools.wait({ n })))
		return rs`}, Limits: sandbox.Limits{Timeout: 10 * time.Second}.Resolve(), Tools: []string{"wait"}}
	out := New(Config{}).Execute(context.Background(), job, h)
	if out.Err != nil || string(out.Value) != "[2,4,6,8,10]" {
		t.Fatalf("got %s, %v; want [2,4,6,8,10]", out.Value, out.Err)
	}
	if h.flushes != 1 {
		t.Errorf("%d flushes, want 1: the five calls of one turn leave together", h.flushes)
	}
}

// A call never answered ends with the run: at the deadline the engine
// cancels its calls, the host answers each with the cancellation, and
// Execute returns E_TIMEOUT instead of waiting for answers that never come.
func TestAsyncHostUnansweredCallsEndWithTheRun(t *testing.T) {
	h := &asyncHost{t: t, all: make(chan struct{}), want: 3}
	l := sandbox.DefaultLimits()
	l.Timeout = 200 * time.Millisecond
	job := &sandbox.Job{Program: sandbox.Program{Source: `
		await Promise.all([tools.wait({n: 1}), tools.wait({n: 2}), tools.wait({n: 3})])`}, Limits: l, Tools: []string{"wait"}}
	out := New(Config{}).Execute(context.Background(), job, h)
	if out.Err == nil || out.Err.Code != sandbox.ETimeout {
		t.Fatalf("got %s, %v; want E_TIMEOUT", out.Value, out.Err)
	}
	select {
	case <-h.all:
	default:
		t.Errorf("only %d calls started, want 3", len(h.started))
	}
}
