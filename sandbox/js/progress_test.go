package js

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// sinkHost is the fake host that also records what the engine streams: log
// entries (sandbox.LogSink) and partial results (sandbox.PartialSink).
type sinkHost struct {
	*sandboxtest.Host
	mu       sync.Mutex
	logs     []string
	partials []string
}

func (h *sinkHost) Log(e string) {
	h.mu.Lock()
	h.logs = append(h.logs, e)
	h.mu.Unlock()
}

func (h *sinkHost) Partial(v json.RawMessage) {
	h.mu.Lock()
	h.partials = append(h.partials, string(v))
	h.mu.Unlock()
}

func TestProgressValue(t *testing.T) {
	e := New(Config{})
	short := sandbox.Limits{Timeout: 300 * time.Millisecond}.Resolve()
	for _, tc := range []struct {
		name, src string
		limits    sandbox.Limits
		code      sandbox.Code
		result    string
		partial   string
		logs      []string
	}{
		{name: "last wins on timeout",
			src: `for (let i = 0; i < 3; i++) { await tools.ping({n: i}); progress({done: i + 1, last: "é"}); }
			      console.log("spinning"); for (;;) {}`,
			limits: short, code: sandbox.ETimeout, partial: `{"done":3,"last":"é"}`, logs: []string{"spinning"}},
		{name: "kept on success too", src: `progress([1, 2]); return 3`, result: "3", partial: `[1,2]`},
		{name: "undefined stores null", src: `progress(); progress(undefined); return 1`, result: "1", partial: `null`},
		{name: "on cancel", src: `progress("half"); await tools.slow({})`, code: sandbox.ECancelled, partial: `"half"`},
		{name: "over the budget throws and keeps the previous",
			src:    `progress(1); try { progress("x".repeat(300 << 10)) } catch (e) { return [e.code, e instanceof ToolError, e.message] }`,
			result: `["E_OUTPUT_LIMIT",true,"progress(value): the value is over the 262144-byte result budget"]`, partial: `1`},
		{name: "uncaught over the budget fails the run",
			src: `progress({a: 1}); progress("x".repeat(300 << 10))`, code: sandbox.EOutputLimit, partial: `{"a":1}`},
		{name: "not JSON", src: `try { progress(1n) } catch (e) { return e.code }`, result: `"E_RESULT_INVALID"`},
		{name: "a global function like console.log", src: `return [typeof progress, progress.name, progress(0)]`, result: `["function","progress",null]`, partial: `0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := tc.limits
			if lim.Timeout == 0 {
				lim = sandbox.DefaultLimits()
			}
			ctx := context.Background()
			if tc.code == sandbox.ECancelled {
				c, cancel := context.WithCancel(ctx)
				time.AfterFunc(100*time.Millisecond, cancel)
				ctx = c
			}
			h := &sinkHost{Host: newHost()}
			out := e.Execute(ctx, &sandbox.Job{Program: sandbox.Program{Source: tc.src}, Limits: lim, Tools: testTools}, h)
			var code sandbox.Code
			if out.Err != nil {
				code = out.Err.Code
			}
			if code != tc.code || (tc.result != "" && string(out.Value) != tc.result) {
				t.Fatalf("got %s %v, want %q %s", out.Value, out.Err, tc.code, tc.result)
			}
			if string(out.Partial) != tc.partial {
				t.Errorf("partial = %s, want %s", out.Partial, tc.partial)
			}
			if tc.logs != nil && strings.Join(out.Logs, "\n") != strings.Join(tc.logs, "\n") {
				t.Errorf("logs = %q, want %q", out.Logs, tc.logs)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if tc.partial != "" && (len(h.partials) == 0 || h.partials[len(h.partials)-1] != tc.partial) {
				t.Errorf("the host's sink saw %q, want it to end with %s", h.partials, tc.partial)
			}
			if strings.Join(h.logs, "\n") != strings.Join(out.Logs, "\n") {
				t.Errorf("the host's sink saw logs %q, the outcome has %q", h.logs, out.Logs)
			}
		})
	}
}

// TestKeepResult: a result over MaxResultBytes comes back whole when the
// job keeps it (Job.KeepResultBytes), and fails with E_OUTPUT_LIMIT
// otherwise or past the keep.
func TestKeepResult(t *testing.T) {
	e := New(Config{})
	src := `return Array.from({length: input}, (_, i) => ({i, s: "é\"<>" + i}))`
	for _, tc := range []struct {
		n, keep int
		code    sandbox.Code
	}{
		{100, 0, ""},
		{40000, 0, sandbox.EOutputLimit},
		{40000, 4 << 20, ""},
		{40000, 256 << 10, sandbox.EOutputLimit},
	} {
		job := &sandbox.Job{Program: sandbox.Program{Source: src, Input: json.RawMessage(mustJSON(tc.n))},
			Limits: sandbox.DefaultLimits(), KeepResultBytes: tc.keep}
		out := e.Execute(context.Background(), job, newHost())
		var code sandbox.Code
		if out.Err != nil {
			code = out.Err.Code
		}
		if code != tc.code {
			t.Fatalf("n=%d keep=%d: %v, want %q", tc.n, tc.keep, out.Err, tc.code)
		}
		if code == "" {
			var v []map[string]any
			if err := json.Unmarshal(out.Value, &v); err != nil || len(v) != tc.n {
				t.Fatalf("n=%d keep=%d: %d items (%v)", tc.n, tc.keep, len(v), err)
			}
		}
	}
}

// TestEmptyLogsAreCounted: an empty console entry costs a byte of the log
// budget, so that console.log() in a loop cannot grow the kept logs (and
// what streams to the server) by millions of entries while the budget
// never fills.
func TestEmptyLogsAreCounted(t *testing.T) {
	e := New(Config{})
	lim := sandbox.Limits{Timeout: 5 * time.Second, MaxLogBytes: 100}.Resolve()
	h := &sinkHost{Host: newHost()}
	out := e.Execute(context.Background(), &sandbox.Job{Program: sandbox.Program{
		Source: `console.log("abc"); for (let i = 0; i < 20000; i++) console.log(); return 1`}, Limits: lim}, h)
	if out.Err != nil {
		t.Fatalf("err = %v", out.Err)
	}
	if len(out.Logs) != 98 || !out.LogsTruncated || out.Logs[0] != "abc" {
		t.Fatalf("%d entries kept (truncated %v), want 98: \"abc\" and 97 empty ones", len(out.Logs), out.LogsTruncated)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.logs) != len(out.Logs) {
		t.Fatalf("%d entries streamed, want %d", len(h.logs), len(out.Logs))
	}
}
