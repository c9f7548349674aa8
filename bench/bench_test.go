package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234", -123: "-123"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	r := summarize("w", "inprocess", []time.Duration{4 * ms, 1 * ms, 3 * ms, 2 * ms}, 1000)
	if r.Runs != 4 || r.MedianMS != 2.5 || r.MinMS != 1 || r.MaxMS != 4 || r.CallsPerS != 400000 {
		t.Errorf("summarize: %+v", r)
	}
}

// TestWriteTable: timed rows in one table, memory rows in another, a
// settle time in seconds or "over" the window, then the notes.
func TestWriteTable(t *testing.T) {
	settled, never := 2500.0, -1.0
	rep := &Report{Rows: []Row{
		{Workload: "load", Tier: "process", Runs: 100, MedianMS: 5, MinMS: 1, MaxMS: 9, P99MS: 8.5, RunsPerS: 950},
		{Workload: "idle-memory", Tier: "process", ServerRSSMB: 30.1, WorkerRSSMB: []float64{20.5}, RSSMB: 50.6},
		{Workload: "after-burst", Tier: "process", ServerRSSMB: 31, WorkerRSSMB: []float64{21}, RSSMB: 52, PeakRSSMB: 400, SettleMS: &settled},
		{Workload: "after-burst", Tier: "inprocess", ServerRSSMB: 40, RSSMB: 40, PeakRSSMB: 90, SettleMS: &never},
	}, Notes: []string{"a note"}}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"p99 ms", "8.50", "950", "memory (RSS)", "20.5", "50.6", "2.5 s", "over 15 s", "a note"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "workload") != 1 {
		t.Errorf("want one timed table:\n%s", out)
	}
}

func TestLoadRatio(t *testing.T) {
	got := loadRatio([]Row{{Tier: "inprocess", RunsPerS: 1000, P99MS: 10}, {Tier: "process", RunsPerS: 800, P99MS: 15}}, 10)
	if want := "load: process tier 0.80x the in-process runs/s, p99 1.50x (10 clients)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRunRefusesUnknownNames(t *testing.T) {
	if _, err := Run(t.Context(), Config{Tiers: []string{"gpu"}}); err == nil || !strings.Contains(err.Error(), `"gpu"`) {
		t.Errorf("unknown tier: %v", err)
	}
	if _, err := Run(t.Context(), Config{Workloads: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "first-run-return1") {
		t.Errorf("unknown workload: %v", err)
	}
	if _, err := Run(t.Context(), Config{Tiers: []string{"process"}, Workloads: []string{"expense"}}); err == nil || !strings.Contains(err.Error(), "NewPool") {
		t.Errorf("process tier without a pool: %v", err)
	}
}
