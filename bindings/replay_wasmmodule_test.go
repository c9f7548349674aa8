package bindings

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/wasm"
)

// TestSuspendReplayWasm: a WebAssembly program that reads WASI's random
// and clocks and passes what it read to count, then to pay (which needs an
// approval), suspends at pay; replayed with the same Seed and Clock it
// reads the same values, count is answered from the log, pay is the
// pending call and is made once. Replayed with another Seed or Clock, its
// count call differs from the logged one: the replay diverges and ends
// with a clear E_TOOL_DENIED (which the guest returns), paying nothing and counting nothing again.
func TestSuspendReplayWasm(t *testing.T) {
	mod, err := os.ReadFile("../sandbox/wasm/testdata/wasi_replay.wasm")
	if err != nil {
		t.Fatal(err)
	}
	js, counts, pays := replayRunner(t)
	e, err := wasm.New(wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	r, err := NewRunner(RunnerConfig{Broker: js.broker, Executor: e, Languages: []sandbox.Language{sandbox.WASM}})
	if err != nil {
		t.Fatal(err)
	}

	clock := time.Date(2026, 7, 28, 9, 30, 0, 0, time.UTC)
	req := RunRequest{Program: sandbox.Program{Language: sandbox.WASM, Module: mod}, Suspend: true, Seed: 7, Clock: clock}
	res, susp := r.RunResumable(context.Background(), req)
	if susp == nil {
		t.Fatalf("no suspension: %+v", res.Error)
	}
	if len(susp.Log) != 1 || susp.Log[0].Tool != "count" || susp.Pending.Tool != "pay" ||
		string(susp.Pending.Args) != string(susp.Log[0].Args) {
		t.Fatalf("suspension %+v", susp)
	}
	if counts.Load() != 1 || pays.Load() != 0 {
		t.Fatalf("before the approval: %d counts, %d pays", counts.Load(), pays.Load())
	}

	for _, other := range []struct {
		name  string
		seed  uint64
		clock time.Time
	}{{"seed", 8, clock}, {"clock", 7, clock.Add(time.Second)}} {
		d := req
		d.Seed, d.Clock = other.seed, other.clock
		d.Replay = &Replay{Log: susp.Log, Pending: susp.Pending, Approved: true}
		res, s2 := r.RunResumable(context.Background(), d)
		// The guest returns a tool error as its result (wasi_replay.wat).
		var e sandbox.Error
		if s2 != nil || !res.OK || json.Unmarshal(res.Result, &e) != nil || e.Code != sandbox.EToolDenied ||
			e.Tool != "count" || !strings.Contains(e.Message, "diverged") || e.Hint == "" {
			t.Fatalf("another %s: %+v %+v %s", other.name, res.Error, s2, res.Result)
		}
	}
	if counts.Load() != 1 || pays.Load() != 0 {
		t.Fatalf("after diverging: %d counts, %d pays; want 1 and 0", counts.Load(), pays.Load())
	}

	req.Replay = &Replay{Log: susp.Log, Pending: susp.Pending, Approved: true}
	res, s2 := r.RunResumable(context.Background(), req)
	if s2 != nil || !res.OK {
		t.Fatalf("replay: %+v %+v", res.Error, s2)
	}
	if string(res.Result) != string(susp.Pending.Args) {
		t.Errorf("the replay read %s, the first run %s", res.Result, susp.Pending.Args)
	}
	if counts.Load() != 1 || pays.Load() != 1 {
		t.Errorf("%d counts, %d pays; want 1 and 1", counts.Load(), pays.Load())
	}
}
