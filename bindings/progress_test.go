package bindings

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// funcExec is an Executor given as a function.
type funcExec func(ctx context.Context, job *sandbox.Job, host sandbox.Host) *sandbox.Outcome

func (f funcExec) Execute(ctx context.Context, job *sandbox.Job, host sandbox.Host) *sandbox.Outcome {
	return f(ctx, job, host)
}

// TestRunProgress: the Progress callback sees a call in flight while it
// runs, then done, then a stored partial result; a failed run reports the
// last partial result.
func TestRunProgress(t *testing.T) {
	release := make(chan struct{})
	hold := &tools.Tool{Name: "hold", Description: "Waits for the test.", InputSchema: open,
		Handler: func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			select {
			case <-release:
				return json.RawMessage("1"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
	b := newBroker(t, BrokerConfig{}, hold)
	exec := funcExec(func(ctx context.Context, job *sandbox.Job, host sandbox.Host) *sandbox.Outcome {
		if _, err := host.Call(ctx, "hold", nil); err != nil {
			return &sandbox.Outcome{Err: sandbox.AsError(err, "")}
		}
		ps := host.(sandbox.PartialSink)
		ps.Partial(json.RawMessage(`{"step":1}`))
		ps.Partial(json.RawMessage(`{"step":2}`))
		return &sandbox.Outcome{Err: sandbox.Errorf(sandbox.ETimeout, "", "the run exceeded its time limit")}
	})
	r, err := NewRunner(RunnerConfig{Broker: b, Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen []RunProgress
		once sync.Once
	)
	res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: "x"}, Progress: func(p RunProgress) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
		if p.InFlight == 1 {
			once.Do(func() { close(release) })
		}
	}})
	if res.OK || res.Error.Code != sandbox.ETimeout || string(res.Partial) != `{"step":2}` {
		t.Fatalf("result %+v, partial %s; want E_TIMEOUT with the last partial", res, res.Partial)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []struct{ total, inflight, partials int }{{0, 1, 0}, {1, 0, 0}, {1, 0, 1}, {1, 0, 2}}
	if len(seen) != len(want) {
		t.Fatalf("%d snapshots, want %d: %+v", len(seen), len(want), seen)
	}
	for i, w := range want {
		p := seen[i]
		if p.Calls.Total != w.total || p.InFlight != w.inflight || p.Partials != w.partials || p.Seq != uint64(i+1) {
			t.Errorf("snapshot %d = %+v, want total %d, in flight %d, partials %d", i, p, w.total, w.inflight, w.partials)
		}
		if i > 0 && p.Elapsed < seen[i-1].Elapsed {
			t.Errorf("elapsed went back: %v after %v", p.Elapsed, seen[i-1].Elapsed)
		}
	}
	if seen[3].PartialBytes != len(`{"step":2}`) {
		t.Errorf("partial bytes = %d", seen[3].PartialBytes)
	}
}

// TestCutResult: a result over the budget becomes its first page — a JSON
// string of the longest prefix that fits, cut at a character — with the
// whole kept in Result.Whole; WholeResult keeps it whole instead.
func TestCutResult(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := 0; b.Len() < 300<<10; i++ {
		b.WriteString(`"é日🙂 \"quoted\" back\\slash \u0001 <&> ",`)
	}
	b.WriteString(`0]`)
	whole := []byte(b.String())
	var job *sandbox.Job
	exec := funcExec(func(_ context.Context, j *sandbox.Job, _ sandbox.Host) *sandbox.Outcome {
		job = j
		return &sandbox.Outcome{Value: whole}
	})
	r, err := NewRunner(RunnerConfig{Broker: newBroker(t, BrokerConfig{}), Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{256 << 10, 1000, 7, 3} {
		res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: "x"}, Limits: sandbox.Limits{MaxResultBytes: max}})
		if job.KeepResultBytes != sandbox.MaxKeptResultBytes {
			t.Fatalf("job keeps %d bytes, want %d", job.KeepResultBytes, sandbox.MaxKeptResultBytes)
		}
		if !res.OK || !res.Truncated || !bytes.Equal(res.Whole, whole) || res.OutputBytes != len(whole) {
			t.Fatalf("max %d: ok %v truncated %v whole %d bytes", max, res.OK, res.Truncated, len(res.Whole))
		}
		if len(res.Result) > max {
			t.Errorf("max %d: the page is %d bytes of JSON", max, len(res.Result))
		}
		var page string
		if err := json.Unmarshal(res.Result, &page); err != nil {
			t.Fatalf("max %d: page %s is not a JSON string: %v", max, res.Result, err)
		}
		n := res.OutputNextOffset
		if page != string(whole[:n]) || !utf8.ValidString(page) {
			t.Fatalf("max %d: page is not the first %d bytes", max, n)
		}
		// The longest that fits: one more character would not.
		_, w := utf8.DecodeRune(whole[n:])
		if next, _ := marshalString(whole[:n+w]); len(next) <= max {
			t.Errorf("max %d: the page stops at %d but %d bytes would fit", max, n, n+w)
		}
	}
	res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: "x"}, WholeResult: true})
	if !res.OK || res.Truncated || !bytes.Equal(res.Result, whole) || res.Whole != nil {
		t.Fatalf("WholeResult: truncated %v, %d bytes", res.Truncated, len(res.Result))
	}
	// Small results are untouched.
	whole = []byte(`{"a":1}`)
	if res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: "x"}}); res.Truncated || string(res.Result) != `{"a":1}` {
		t.Fatalf("small result: %+v", res)
	}

	r, _ = NewRunner(RunnerConfig{Broker: newBroker(t, BrokerConfig{}), Executor: exec, KeepResultBytes: -1})
	r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: "x"}, Limits: sandbox.Limits{Timeout: time.Second}})
	if job.KeepResultBytes != 0 {
		t.Errorf("KeepResultBytes -1: the job keeps %d bytes", job.KeepResultBytes)
	}
}

// TestCutLogs: logs over their budget show what fits, cut like the engines
// cut them, and the whole output (up to the keep) is kept as text, one
// entry per line; the engine is given the keep as its log limit.
func TestCutLogs(t *testing.T) {
	var logs []string
	for i := 0; i < 100; i++ {
		logs = append(logs, strings.Repeat("é", 50)+" entry "+strings.Repeat("x", i%7))
	}
	var job *sandbox.Job
	exec := funcExec(func(_ context.Context, j *sandbox.Job, _ sandbox.Host) *sandbox.Outcome {
		job = j
		return &sandbox.Outcome{Value: json.RawMessage("1"), Logs: append([]string(nil), logs...)}
	})
	r, err := NewRunner(RunnerConfig{Broker: newBroker(t, BrokerConfig{}), Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	whole := strings.Join(logs, "\n")
	for _, max := range []int{1000, 1001, 4321} {
		res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: "x"}, Limits: sandbox.Limits{MaxLogBytes: max}})
		if job.Limits.MaxLogBytes != sandbox.MaxKeptLogBytes {
			t.Fatalf("the engine's log limit is %d, want the keep %d", job.Limits.MaxLogBytes, sandbox.MaxKeptLogBytes)
		}
		if !res.OK || !res.Truncated || string(res.WholeLogs) != whole || res.LogsBytes != len(whole) {
			t.Fatalf("max %d: truncated %v, whole logs %d bytes", max, res.Truncated, len(res.WholeLogs))
		}
		n := 0
		for i, e := range res.Logs {
			n += len(e)
			if !utf8.ValidString(e) || (i < len(res.Logs)-1 && e != logs[i]) || !strings.HasPrefix(logs[i], e) {
				t.Fatalf("max %d: entry %d = %q", max, i, e)
			}
		}
		if n > max || n < max-len("é") {
			t.Errorf("max %d: logs hold %d bytes", max, n)
		}
		shown := strings.Join(res.Logs, "\n")
		if res.LogsNextOffset != len(shown) || !strings.HasPrefix(whole, shown) {
			t.Errorf("max %d: next offset %d, shown %d bytes, prefix %v", max, res.LogsNextOffset, len(shown), strings.HasPrefix(whole, shown))
		}
	}
	// Within the budget: untouched.
	res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: "x"}})
	if res.Truncated || res.WholeLogs != nil || len(res.Logs) != 100 {
		t.Errorf("logs within the budget: truncated %v, %d entries", res.Truncated, len(res.Logs))
	}
	// WholeResult: everything.
	res = r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: "x"}, Limits: sandbox.Limits{MaxLogBytes: 1000}, WholeResult: true})
	if res.Truncated || len(res.Logs) != 100 {
		t.Errorf("WholeResult: truncated %v, %d entries", res.Truncated, len(res.Logs))
	}
}

// TestRunDoesNotWaitForStuckTool: a cancelled run ends while a tool that
// ignores its context is still running (the tool is released only after
// Run returns, so waiting for it would deadlock).
func TestRunDoesNotWaitForStuckTool(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	stuck := &tools.Tool{Name: "stuck", Description: "Ignores cancellation.", InputSchema: open,
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			close(started)
			<-release
			return json.RawMessage("1"), nil
		}}
	exec := funcExec(func(ctx context.Context, _ *sandbox.Job, host sandbox.Host) *sandbox.Outcome {
		_, err := host.Call(ctx, "stuck", nil)
		return &sandbox.Outcome{Err: sandbox.AsError(err, "")}
	})
	r, err := NewRunner(RunnerConfig{Broker: newBroker(t, BrokerConfig{}, stuck), Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	res := r.Run(ctx, RunRequest{Program: sandbox.Program{Source: "x"}})
	close(release)
	if res.OK || res.Error.Code != sandbox.ECancelled {
		t.Fatalf("result %+v, want E_CANCELLED", res)
	}
}

// TestCutLogsEmptyEntries: empty log entries cost a byte each, so a flood of
// them is cut to the budget like any other logs.
func TestCutLogsEmptyEntries(t *testing.T) {
	logs := make([]string, 100000)
	exec := funcExec(func(_ context.Context, j *sandbox.Job, _ sandbox.Host) *sandbox.Outcome {
		return &sandbox.Outcome{Value: json.RawMessage("1"), Logs: append([]string(nil), logs...)}
	})
	r, err := NewRunner(RunnerConfig{Broker: newBroker(t, BrokerConfig{}), Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: "x"}, Limits: sandbox.Limits{MaxLogBytes: 1000}})
	if !res.OK || !res.Truncated || len(res.Logs) != 1000 {
		t.Fatalf("ok %v, truncated %v, %d entries kept; want 1000", res.OK, res.Truncated, len(res.Logs))
	}
}

// TestRunProgressTextTools: the tools' own progress is appended to the
// run's text, with the total when known and the message in parentheses.
func TestRunProgressTextTools(t *testing.T) {
	p := RunProgress{InFlight: 2, Tools: []ToolProgress{
		{Tool: "github_search", Progress: 40, Total: 100},
		{Tool: "fs_walk", Progress: 7, Message: "indexing"},
	}}
	want := "0 calls done (0 ok, 0 failed), 2 in flight, 1.5s elapsed; github_search: 40/100, fs_walk: 7 (indexing)"
	if got := p.Text(1500 * time.Millisecond); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
