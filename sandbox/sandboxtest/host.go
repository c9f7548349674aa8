// Package sandboxtest provides a scriptable fake sandbox.Host for the tests
// of engines and executors: the broker's side of a tool call without a
// broker, a catalog or a policy.
//
// New returns a host with the standard tools below, plus any the test
// scripts as Funcs:
//
//	ping({n})  → n+1
//	echo(args) → args
//	nap()      → true after 20 ms (or the error of a cancelled ctx)
//	slow()     → blocks until cancelled
//	fail()     → E_TOOL_FAILED (retryable)
//	deny()     → E_TOOL_DENIED with rule "no-deny" and a hint
//
// Unknown names get E_TOOL_UNKNOWN. Like the broker, the host names the
// tool in every *sandbox.Error it returns. It counts calls, records the
// in-flight high-water mark, and keeps the log entries streamed to it
// (sandbox.LogSink).
package sandboxtest

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// Func is one scripted tool.
type Func func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)

// Host is the fake. Its zero value has no tools; use New.
type Host struct {
	tools map[string]Func

	calls, inflight, maxIn atomic.Int64

	mu   sync.Mutex
	logs []string
}

var (
	_ sandbox.Host    = (*Host)(nil)
	_ sandbox.LogSink = (*Host)(nil)
)

// New returns a host with the standard tools and extra (which may replace
// them).
func New(extra map[string]Func) *Host {
	h := &Host{tools: Standard()}
	for name, f := range extra {
		h.tools[name] = f
	}
	return h
}

// Standard returns the standard tools, a new map on each call.
func Standard() map[string]Func {
	return map[string]Func{
		"ping": func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
			var a struct{ N int64 }
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, &sandbox.Error{Code: sandbox.EToolArgs, Message: "n must be a number", Path: "/n"}
			}
			return strconv.AppendInt(nil, a.N+1, 10), nil
		},
		"echo": func(_ context.Context, args json.RawMessage) (json.RawMessage, error) { return args, nil },
		"nap": func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			select {
			case <-time.After(20 * time.Millisecond):
				return json.RawMessage("true"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		"slow": func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
		"fail": func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, &sandbox.Error{Code: sandbox.EToolFailed, Message: "upstream unavailable", Hint: "Try again later.", Retryable: true}
		},
		"deny": func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, &sandbox.Error{Code: sandbox.EToolDenied, Message: "denied by policy", Rule: "no-deny", Hint: "Ask a person."}
		},
	}
}

// Call implements sandbox.Host.
func (h *Host) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	h.calls.Add(1)
	n := h.inflight.Add(1)
	defer h.inflight.Add(-1)
	for {
		m := h.maxIn.Load()
		if n <= m || h.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	f, ok := h.tools[tool]
	if !ok {
		return nil, &sandbox.Error{Code: sandbox.EToolUnknown, Message: "no such tool", Tool: tool}
	}
	res, err := f(ctx, args)
	var e *sandbox.Error
	if errors.As(err, &e) && e.Tool == "" {
		e.Tool = tool
	}
	return res, err
}

// Log implements sandbox.LogSink.
func (h *Host) Log(entry string) {
	h.mu.Lock()
	h.logs = append(h.logs, entry)
	h.mu.Unlock()
}

// Calls returns the number of calls made.
func (h *Host) Calls() int64 { return h.calls.Load() }

// MaxInFlight returns the most calls that were in flight at once.
func (h *Host) MaxInFlight() int64 { return h.maxIn.Load() }

// Logs returns the log entries streamed so far.
func (h *Host) Logs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.logs...)
}
