package wasm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// testHost is an in-package fake of the broker:
//
//	ping({n})  → n+1
//	echo(args) → args
//	nap()      → true after 20 ms (fan-out)
//	slow()     → blocks until cancelled
//	fail()     → E_TOOL_FAILED (retryable)
//	deny()     → E_TOOL_DENIED with a rule
//
// Unknown names get E_TOOL_UNKNOWN. It records the in-flight high-water
// mark, and streamed log entries.
type testHost struct {
	calls    atomic.Int64
	inflight atomic.Int64
	maxIn    atomic.Int64
	mu       sync.Mutex
	streamed []string
}

func (h *testHost) Log(entry string) {
	h.mu.Lock()
	h.streamed = append(h.streamed, entry)
	h.mu.Unlock()
}

func (h *testHost) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	h.calls.Add(1)
	n := h.inflight.Add(1)
	defer h.inflight.Add(-1)
	for {
		m := h.maxIn.Load()
		if n <= m || h.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	switch tool {
	case "ping":
		var a struct{ N int64 }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, &sandbox.Error{Code: sandbox.EToolArgs, Message: "n must be a number", Path: "/n", Tool: tool}
		}
		return strconv.AppendInt(nil, a.N+1, 10), nil
	case "echo":
		return args, nil
	case "nap":
		select {
		case <-time.After(20 * time.Millisecond):
			return json.RawMessage("true"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "slow":
		<-ctx.Done()
		return nil, ctx.Err()
	case "fail":
		return nil, &sandbox.Error{Code: sandbox.EToolFailed, Message: "upstream unavailable", Hint: "Try again later.", Retryable: true, Tool: tool}
	case "deny":
		return nil, &sandbox.Error{Code: sandbox.EToolDenied, Message: "denied by policy", Rule: "no-deny", Hint: "Ask a person.", Tool: tool}
	}
	return nil, &sandbox.Error{Code: sandbox.EToolUnknown, Message: "no such tool", Tool: tool}
}

// fixture reads testdata/name.wasm.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newEngine returns an engine closed at the end of the test.
func newEngine(t testing.TB, cfg Config) *Engine {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func job(module []byte, input string, l sandbox.Limits) *sandbox.Job {
	j := &sandbox.Job{RunID: "test", Program: sandbox.Program{Language: sandbox.WASM, Module: module}, Limits: l.Resolve()}
	if input != "" {
		j.Program.Input = json.RawMessage(input)
	}
	return j
}
