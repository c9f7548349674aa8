package bindings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// flaky returns a tool that fails with fail for its first n calls, then
// echoes; calls counts every handler run.
func flaky(name string, idempotent bool, n int32, fail error, calls *atomic.Int32) *tools.Tool {
	t := echo(name)
	t.Effects.Idempotent = idempotent
	t.Handler = func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		if calls.Add(1) <= n {
			return nil, fail
		}
		return args, nil
	}
	return t
}

func TestRetries(t *testing.T) {
	transient := tools.Transient("the backend is busy", "")
	tests := []struct {
		name       string
		idempotent bool
		failures   int32
		fail       error
		maxRetries int
		wantCalls  int32
		wantCode   sandbox.Code
		wantRetry  int
	}{
		{"idempotent transient is retried", true, 2, transient, 0, 3, "", 2},
		{"non-idempotent transient is not", false, 1, transient, 0, 1, sandbox.EToolFailed, 0},
		{"plain failure is not", true, 1, tools.Failed("bad", ""), 0, 1, sandbox.EToolFailed, 0},
		{"unavailable is not", true, 1, tools.Unavailable("no price for that day", ""), 0, 1, sandbox.EToolFailed, 0},
		{"argument error is not", true, 1, tools.ArgError("/q", "no such quarter", ""), 0, 1, sandbox.EToolArgs, 0},
		{"bare Go error is not", true, 1, errors.New("boom"), 0, 1, sandbox.EToolFailed, 0},
		{"default cap is 2", true, 100, transient, 0, 3, sandbox.EToolFailed, 2},
		{"cap respected", true, 100, transient, 4, 5, sandbox.EToolFailed, 4},
		{"negative cap disables", true, 100, transient, -1, 1, sandbox.EToolFailed, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			var buf bytes.Buffer
			var mu sync.Mutex
			b := newBroker(t, BrokerConfig{MaxRetries: tc.maxRetries, RetryBackoff: time.Microsecond,
				Audit: slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, nil))},
				flaky("f", tc.idempotent, tc.failures, tc.fail, &calls))
			r := newRun(b, sandbox.Limits{})
			res, err := r.Call(context.Background(), "f", json.RawMessage(`{"a":1}`))
			if got := code(err); got != tc.wantCode {
				t.Fatalf("code = %q, want %q (err %v)", got, tc.wantCode, err)
			}
			if tc.wantCode == "" && string(res) != `{"a":1}` {
				t.Fatalf("result = %s", res)
			}
			if n := calls.Load(); n != tc.wantCalls {
				t.Fatalf("handler ran %d times, want %d", n, tc.wantCalls)
			}
			s := r.snapshot()
			if s.Total != 1 || s.ByTool["f"] != 1 || s.Retries != tc.wantRetry {
				t.Fatalf("stats = %+v, want one logical call and %d retries", s, tc.wantRetry)
			}
			// One audit record per attempt, numbered.
			mu.Lock()
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			mu.Unlock()
			if len(lines) != int(tc.wantCalls) {
				t.Fatalf("%d audit records, want %d", len(lines), tc.wantCalls)
			}
			for i, l := range lines {
				var rec struct {
					Attempt int    `json:"attempt"`
					Code    string `json:"code"`
				}
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatal(err)
				}
				if rec.Attempt != i+1 {
					t.Errorf("record %d: attempt %d", i, rec.Attempt)
				}
				if i < len(lines)-1 && rec.Code != string(sandbox.EToolFailed) {
					t.Errorf("retried attempt %d: code %q", i+1, rec.Code)
				}
			}
		})
	}
}

// TestRetryAfterCallTimeout: the broker's own per-call timeout is a
// transient failure, retried for an idempotent tool.
func TestRetryAfterCallTimeout(t *testing.T) {
	var calls atomic.Int32
	slow := echo("slow")
	slow.Effects.Idempotent = true
	slow.Handler = func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		if calls.Add(1) == 1 {
			<-ctx.Done() // hangs past the per-call timeout
			return nil, ctx.Err()
		}
		return args, nil
	}
	b := newBroker(t, BrokerConfig{CallTimeout: 5 * time.Millisecond, RetryBackoff: time.Microsecond}, slow)
	r := newRun(b, sandbox.Limits{})
	if _, err := r.Call(context.Background(), "slow", nil); err != nil {
		t.Fatal(err)
	}
	if s := r.snapshot(); calls.Load() != 2 || s.Retries != 1 || s.OK != 1 {
		t.Fatalf("calls %d, stats %+v", calls.Load(), s)
	}
}

// TestRetryBackoffHonoursContext: a cancellation during the backoff ends
// the call at once (the backoff here is an hour), and a deadline that
// leaves no room for the backoff means no retry at all.
func TestRetryBackoffHonoursContext(t *testing.T) {
	var calls atomic.Int32
	failed := make(chan struct{}, 1)
	tool := echo("f")
	tool.Effects.Idempotent = true
	tool.Handler = func(context.Context, json.RawMessage) (json.RawMessage, error) {
		calls.Add(1)
		failed <- struct{}{}
		return nil, tools.Transient("busy", "")
	}
	b := newBroker(t, BrokerConfig{RetryBackoff: time.Hour}, tool)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	r := newRun(b, sandbox.Limits{})
	go func() { _, err := r.Call(ctx, "f", nil); errc <- err }()
	<-failed
	cancel()
	select {
	case err := <-errc:
		if code(err) != sandbox.ECancelled {
			t.Fatalf("err = %v, want E_CANCELLED", err)
		}
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		t.Fatal("the call did not end when its context was cancelled during the backoff")
	}
	if s := r.snapshot(); calls.Load() != 1 || s.Retries != 0 {
		t.Fatalf("calls %d, retries %d", calls.Load(), s.Retries)
	}

	calls.Store(0)
	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second) // shorter than any wait (at least 30 s: half the 1-minute cap)
	defer dcancel()
	r = newRun(b, sandbox.Limits{})
	_, err := r.Call(dctx, "f", nil)
	<-failed
	var e *sandbox.Error
	if !errors.As(err, &e) || e.Code != sandbox.EToolFailed || !e.Retryable || e.Reason != sandbox.ReasonTransient {
		t.Fatalf("err = %#v, want the transient failure itself", err)
	}
	if calls.Load() != 1 {
		t.Fatalf("retried although the backoff runs past the deadline (%d calls)", calls.Load())
	}
}

// TestBackoffFreesSlot: a call waiting to retry does not hold its
// in-flight slot, so the run's other calls go on.
func TestBackoffFreesSlot(t *testing.T) {
	failed := make(chan struct{}, 1)
	f := echo("f")
	f.Effects.Idempotent = true
	f.Handler = func(context.Context, json.RawMessage) (json.RawMessage, error) {
		failed <- struct{}{}
		return nil, tools.Transient("busy", "")
	}
	b := newBroker(t, BrokerConfig{RetryBackoff: time.Hour}, f, echo("ok"))
	r := newRun(b, sandbox.Limits{MaxInFlight: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Call(ctx, "f", nil) //nolint:errcheck // waits to retry until cancelled
	<-failed
	done := make(chan error, 1)
	go func() { _, err := r.Call(context.Background(), "ok", nil); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		t.Fatal("a call waiting to retry holds the only in-flight slot")
	}
}

// TestDirectRetries: direct calls follow the same rule.
func TestDirectRetries(t *testing.T) {
	var calls atomic.Int32
	b := newBroker(t, BrokerConfig{RetryBackoff: time.Microsecond},
		flaky("f", true, 1, tools.Transient("busy", ""), &calls))
	if _, err := b.CallDirect(context.Background(), LocalPrincipal, "f", nil); err != nil || calls.Load() != 2 {
		t.Fatalf("err %v, %d calls", err, calls.Load())
	}
	var once atomic.Int32
	b = newBroker(t, BrokerConfig{RetryBackoff: time.Microsecond},
		flaky("g", false, 1, tools.Transient("busy", ""), &once))
	if _, err := b.CallDirect(context.Background(), LocalPrincipal, "g", nil); code(err) != sandbox.EToolFailed || once.Load() != 1 {
		t.Fatalf("err %v, %d calls", err, once.Load())
	}
}

// TestUniformErrors: every error a caller sees from the broker has a code,
// a message and a hint; tool errors have the reason that tells invalid
// input, transient failure, unavailable data and denial apart, and
// allowed_values when an enum was violated.
func TestUniformErrors(t *testing.T) {
	level := echo("level")
	level.InputSchema = &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{"level": {Enum: []any{"L1", "L2"}}}}
	failing := func(name string, err error) *tools.Tool {
		x := echo(name)
		x.Handler = func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, err }
		return x
	}
	bigStr := echo("big_string")
	bigStr.OutputBudget = 8
	bigStr.Handler = func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"` + strings.Repeat("x", 20) + `"`), nil
	}
	directOnly := echo("direct_only")
	directOnly.AllowedCallers = []tools.Caller{tools.Direct}
	b := newBroker(t, BrokerConfig{RetryBackoff: time.Microsecond}, level, directOnly, bigStr,
		failing("transient", tools.Transient("backend busy", "")),
		failing("unavailable", tools.Unavailable("no price for 2026-11-29", "")),
		failing("failed", tools.Failed("it broke", "")),
		failing("argerr", tools.ArgError("/day", "not a trading day", "")),
		failing("bare", errors.New("open /etc/x: denied")),
		failing("hintless", &sandbox.Error{Code: sandbox.EToolFailed, Message: "no hint"}),
	)
	tests := []struct {
		tool, args string
		code       sandbox.Code
		reason     string
	}{
		{"nope", `{}`, sandbox.EToolUnknown, ""},
		{"level", `{"level":"L9"}`, sandbox.EToolArgs, sandbox.ReasonInvalidInput},
		{"direct_only", `{}`, sandbox.EToolDenied, sandbox.ReasonDenied},
		{"transient", `{}`, sandbox.EToolFailed, sandbox.ReasonTransient},
		{"unavailable", `{}`, sandbox.EToolFailed, sandbox.ReasonUnavailable},
		{"failed", `{}`, sandbox.EToolFailed, ""},
		{"argerr", `{}`, sandbox.EToolArgs, sandbox.ReasonInvalidInput},
		{"bare", `{}`, sandbox.EToolFailed, ""},
		{"hintless", `{}`, sandbox.EToolFailed, ""},
		{"big_string", `{}`, sandbox.EOutputLimit, ""},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			_, err := newRun(b, sandbox.Limits{}).Call(context.Background(), tc.tool, json.RawMessage(tc.args))
			var e *sandbox.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *sandbox.Error", err)
			}
			if e.Code != tc.code || e.Reason != tc.reason {
				t.Fatalf("code %q reason %q, want %q %q", e.Code, e.Reason, tc.code, tc.reason)
			}
			if e.Message == "" || e.Hint == "" || e.Tool == "" {
				t.Fatalf("error lacks message, hint or tool: %#v", e)
			}
			if e.Retryable != (tc.reason == sandbox.ReasonTransient) {
				t.Fatalf("retryable = %v for reason %q", e.Retryable, tc.reason)
			}
			if tc.tool == "level" && len(e.AllowedValues) != 2 {
				t.Fatalf("allowed_values = %v", e.AllowedValues)
			}
		})
	}
}

// TestCallLimitCountsLogicalCalls: retries do not count against the run's
// call limit.
func TestCallLimitCountsLogicalCalls(t *testing.T) {
	var calls atomic.Int32
	b := newBroker(t, BrokerConfig{RetryBackoff: time.Microsecond},
		flaky("f", true, 2, tools.Transient("busy", ""), &calls))
	r := newRun(b, sandbox.Limits{MaxCalls: 1})
	if _, err := r.Call(context.Background(), "f", nil); err != nil {
		t.Fatalf("a call retried twice went over a limit of one call: %v", err)
	}
}
