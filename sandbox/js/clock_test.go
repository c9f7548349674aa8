package js

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// TestFixedClock: with a Seed and a Clock, Date reads the same instant for
// the whole run (also after a tool call) and Math.random draws the same
// numbers in two runs; another seed draws others.
func TestFixedClock(t *testing.T) {
	clock := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	src := `const t0 = Date.now(); const d = new Date().toISOString();
		const r = [Math.random(), Math.random(), Math.random()];
		await tools.ping({});
		return {t0, d, same: Date.now() === t0, r}`
	run := func(seed uint64) string {
		job := &sandbox.Job{Program: sandbox.Program{Source: src}, Limits: sandbox.DefaultLimits(),
			Tools: testTools, Seed: seed, Clock: clock}
		out := New(Config{}).Execute(context.Background(), job, newHost())
		if out.Err != nil {
			t.Fatalf("run: %+v", out.Err)
		}
		return string(out.Value)
	}
	a, b, c := run(42), run(42), run(43)
	if a != b {
		t.Errorf("same seed and clock, two results:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("another seed drew the same numbers: %s", a)
	}
	want := `"t0":1785240000000,"d":"2026-07-28T12:00:00.000Z","same":true`
	if !strings.Contains(a, want) {
		t.Errorf("got %s, want it to hold %s", a, want)
	}
}

// TestRealClock: without a Clock, Date reads the real time, so a program
// may wait on it.
func TestRealClock(t *testing.T) {
	job := &sandbox.Job{Program: sandbox.Program{Source: `const t = Date.now(); while (Date.now() === t) {} return Date.now() > t`},
		Limits: sandbox.DefaultLimits()}
	out := New(Config{}).Execute(context.Background(), job, newHost())
	if out.Err != nil || string(out.Value) != "true" {
		t.Fatalf("got %s %+v", out.Value, out.Err)
	}
}
