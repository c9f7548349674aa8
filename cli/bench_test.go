package cli

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestBench checks the shape of `sandcall bench --json` (docs/cli.md) on
// one run of each workload; the figures themselves are for people to read.
// Every row's run was checked by bench against the workload's result.
func TestBench(t *testing.T) {
	// Parallel: it spends most of its time waiting on a subprocess; the
	// package's parallel tests run together after the others.
	t.Parallel()
	heavy(t)
	// Every workload, each in a fresh process: minutes on a loaded machine.
	stdout, stderr, code := sandcallWithin(t, 15*time.Minute, "", "bench", "--json", "--runs", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		for _, k := range []string{"workload", "tier", "runs", "median_ms", "min_ms", "max_ms", "calls_per_s"} {
			if _, ok := r[k]; !ok {
				t.Errorf("row %v lacks %q", r, k)
			}
		}
		seen[fmt.Sprint(r["workload"], "/", r["tier"])] = true
		if r["workload"] == "expense" && r["tier"] == "process" && (r["server_cpu_ms"] == nil || r["worker_cpu_ms"] == nil) {
			t.Errorf("expense/process lacks the CPU per run: %v", r)
		}
		if r["workload"] == "burst" && r["runs"] != float64(64) {
			t.Errorf("burst: %v runs, want 64", r["runs"])
		}
	}
	for _, want := range []string{"expense/inprocess", "expense-cold/inprocess", "fanout/inprocess", "first-run/inprocess",
		"expense/process", "fanout/process", "first-run/process", "deadline-1s/inprocess", "deadline-1s/process",
		"market/inprocess", "market/process",
		// 64 concurrent expense runs through serve --http, all exact; a
		// fresh `sandcall run` of return 1.
		"burst/process", "first-run-return1/inprocess", "first-run-return1/process",
		// WebAssembly: the Go guest (built by bench with the installed Go, which
		// built this binary) and the WAT fan-out.
		"expense-wasm/inprocess", "fanout-wasm/inprocess", "expense-wasm/process", "fanout-wasm/process"} {
		if !seen[want] {
			t.Errorf("no row for %s", want)
		}
	}
}
