package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// TestBench checks the shape of `sandcall bench --json` on one run of each
// workload, from a directory outside the source tree; the figures
// themselves are for people to read. Every row's run was checked by bench
// against the workload's result.
func TestBench(t *testing.T) {
	// Parallel: it spends most of its time waiting on a subprocess; the
	// package's parallel tests run together after the others.
	t.Parallel()
	heavy(t)
	// Every workload, each in a fresh process: minutes on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "bench", "--json", "--runs", "1", "--load-duration", "1s")
	cmd.Dir = t.TempDir() // outside the source tree: every workload is in the binary
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, e.Bytes())
	}
	stdout := o.String()
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
		if r["workload"] == "load" && (r["runs_per_s"] == nil || r["p99_ms"] == nil) {
			t.Errorf("load lacks runs/s or p99: %v", r)
		}
		if r["workload"] == "idle-memory" && r["tier"] == "process" && (r["server_rss_mb"] == nil || r["worker_rss_mb"] == nil) {
			t.Errorf("idle memory lacks the server's or the workers' RSS: %v", r)
		}
		if r["workload"] == "after-burst" && (r["rss_mb"] == nil || r["settle_ms"] == nil) {
			t.Errorf("after-burst lacks its RSS or settle time: %v", r)
		}
	}
	for _, want := range []string{"expense/inprocess", "expense-cold/inprocess", "fanout/inprocess", "first-run/inprocess",
		"expense/process", "fanout/process", "first-run/process", "deadline-1s/inprocess", "deadline-1s/process",
		"market/inprocess", "market/process",
		// 64 concurrent expense runs through serve --http, all exact; a
		// fresh `sandcall run` of return 1.
		"burst/process", "first-run-return1/inprocess", "first-run-return1/process",
		// WebAssembly: the Go and C guests (embedded) and the WAT fan-out.
		"expense-wasm/inprocess", "expense-wasm-c/inprocess", "fanout-wasm/inprocess",
		"expense-wasm/process", "expense-wasm-c/process", "fanout-wasm/process",
		// Ten clients of serve --http; serve over stdio at rest and after a burst.
		"load/inprocess", "load/process", "idle-memory/inprocess", "idle-memory/process",
		"after-burst/inprocess", "after-burst/process"} {
		if !seen[want] {
			t.Errorf("no row for %s", want)
		}
	}
}
