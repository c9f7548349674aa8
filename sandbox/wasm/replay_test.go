package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// wasiRead is what testdata/wasi_replay.wasm read through WASI, each as 16
// hex digits: 8 random bytes, the realtime and monotonic clocks, and the
// realtime clock's resolution.
type wasiRead struct{ R, T, M, S string }

// runWasiReplay runs testdata/wasi_replay.wasm with seed and clock, and
// returns what it read (its result) and the arguments its count call got.
func runWasiReplay(t *testing.T, e *Engine, seed uint64, clock time.Time) (wasiRead, string) {
	t.Helper()
	var countArgs string
	echo := func(_ context.Context, args json.RawMessage) (json.RawMessage, error) { return args, nil }
	h := sandboxtest.New(map[string]sandboxtest.Func{
		"count": func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			countArgs = string(args)
			return echo(ctx, args)
		},
		"pay": echo,
	})
	j := job(fixture(t, "wasi_replay"), "", sandbox.Limits{})
	j.Seed, j.Clock = seed, clock
	o := e.Execute(context.Background(), j, h)
	if o.Err != nil {
		t.Fatalf("seed %d: %v", seed, o.Err)
	}
	var r wasiRead
	if err := json.Unmarshal(o.Value, &r); err != nil || len(r.R) != 16 {
		t.Fatalf("result %s: %v", o.Value, err)
	}
	if countArgs != string(o.Value) {
		t.Errorf("count got %s, the result is %s", countArgs, o.Value)
	}
	return r, countArgs
}

// TestWasiSeedClock: a replayable WebAssembly run (Job.Seed and Clock)
// reads WASI's random_get from its seed and clock_time_get's realtime
// clock frozen at its Clock, so two runs with the same seed and clock read
// the same values (a replay takes the same path) and another seed reads
// other bytes.
func TestWasiSeedClock(t *testing.T) {
	clock := time.Date(2026, 7, 28, 12, 0, 0, 123456789, time.UTC)
	for name, e := range engines(t) {
		t.Run(name, func(t *testing.T) {
			a, argsA := runWasiReplay(t, e, 7, clock)
			b, argsB := runWasiReplay(t, e, 7, clock)
			if a != b || argsA != argsB {
				t.Fatalf("same seed and clock, other values: %+v, %+v", a, b)
			}
			if want := fmt.Sprintf("%016x", clock.UnixNano()); a.T != want {
				t.Errorf("realtime %s, want the run's clock %s", a.T, want)
			}
			if a.S != fmt.Sprintf("%016x", 1) {
				t.Errorf("resolution %s, want 1 ns", a.S)
			}
			if a.M == fmt.Sprintf("%016x", 0) {
				t.Errorf("the monotonic clock did not advance: %s", a.M)
			}
			c, _ := runWasiReplay(t, e, 8, clock)
			if c.R == a.R {
				t.Errorf("seeds 7 and 8 read the same random bytes %s", a.R)
			}
			later := clock.Add(time.Second)
			if d, _ := runWasiReplay(t, e, 7, later); d.T != fmt.Sprintf("%016x", later.UnixNano()) || d.R != a.R {
				t.Errorf("clock +1s: %+v", d)
			}
		})
	}
}
