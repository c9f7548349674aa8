package sandboxtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

func TestHost(t *testing.T) {
	h := sandboxtest.New(map[string]sandboxtest.Func{
		"twice": func(_ context.Context, a json.RawMessage) (json.RawMessage, error) { return append(a, a...), nil },
	})
	ctx := context.Background()
	if r, err := h.Call(ctx, "ping", json.RawMessage(`{"n":41}`)); err != nil || string(r) != "42" {
		t.Errorf("ping: %s, %v", r, err)
	}
	if r, err := h.Call(ctx, "twice", json.RawMessage(`1`)); err != nil || string(r) != "11" {
		t.Errorf("twice: %s, %v", r, err)
	}
	var e *sandbox.Error
	if _, err := h.Call(ctx, "deny", nil); !errors.As(err, &e) || e.Code != sandbox.EToolDenied || e.Tool != "deny" || e.Rule != "no-deny" {
		t.Errorf("deny: %v", err)
	}
	if _, err := h.Call(ctx, "nope", nil); !errors.Is(err, sandbox.ErrToolUnknown) {
		t.Errorf("unknown: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.Call(cctx, "slow", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("slow after cancel: %v", err)
	}
	h.Log("a")
	if h.Calls() != 5 || h.MaxInFlight() != 1 || len(h.Logs()) != 1 {
		t.Errorf("calls %d, max in flight %d, logs %q", h.Calls(), h.MaxInFlight(), h.Logs())
	}
}

// TestBuffer: writers and a reader at once (run with -race).
func TestBuffer(t *testing.T) {
	var b sandboxtest.Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := len(b.String()); n != 400 {
		t.Errorf("%d bytes, want 400", n)
	}
}
