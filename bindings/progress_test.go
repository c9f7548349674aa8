package bindings

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

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
