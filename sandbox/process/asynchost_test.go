package process

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// asyncPingHost is a pingHost that the pool must call through StartCall:
// its Call fails every call.
type asyncPingHost struct {
	pingHost
	started, flushed atomic.Int32
}

func (h *asyncPingHost) Call(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, sandbox.Errorf(sandbox.EInternal, "", "Call used on an AsyncHost")
}

func (h *asyncPingHost) StartCall(ctx context.Context, tool string, args json.RawMessage, done func(json.RawMessage, error)) {
	h.started.Add(1)
	go func() { done(h.pingHost.Call(ctx, tool, args)) }()
}

func (h *asyncPingHost) Flush() { h.flushed.Add(1) }

var _ sandbox.AsyncHost = (*asyncPingHost)(nil)

// TestPoolStartsCallsOnAnAsyncHost: the server's side hands each call of a
// worker to an AsyncHost without a goroutine of its own, flushes after
// the last call it has read, and every answer reaches the program.
func TestPoolStartsCallsOnAnAsyncHost(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	h := &asyncPingHost{}
	o := p.Execute(context.Background(), job("calls 40", 30*time.Second), h)
	if o.Err != nil || string(o.Value) != "820" {
		t.Fatalf("value %s, err %v; want 820", o.Value, o.Err)
	}
	if n := h.started.Load(); n != 40 {
		t.Errorf("%d calls started, want 40", n)
	}
	if n := h.flushed.Load(); n < 1 || n > 40 {
		t.Errorf("%d flushes for 40 calls", n)
	}
}
