package bindings

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sandcall/sandcall/sandbox"
)

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
