package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sandcall/sandcall/bench"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/process"
)

const benchExamples = `  sandcall bench                         # every workload in both tiers, as a table
  sandcall bench --json                  # the same as JSON rows (docs/cli.md)
  sandcall bench --tier process --runs 50
  sandcall bench --workloads first-run-return1 --runs 75   # one workload, the tiers interleaved
  sandcall bench --workloads load,memory # sustained load and resident memory
`

// cmdBench measures the standard workloads in each tier (package bench)
// and prints medians. Every run is checked against its expected result.
func cmdBench(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "bench", "[--json] [--tier inprocess,process] [--runs N] [--workloads W,...]", benchExamples)
	asJSON := fs.Bool("json", false, "print JSON rows: workload, tier, runs, median_ms, min_ms, max_ms, calls_per_s, and per workload more")
	tiers := fs.String("tier", "inprocess,process", "tiers to measure, comma-separated")
	runs := fs.Int("runs", 30, "timed runs per workload (first-run uses a third of them, burst a tenth)")
	reuse := fs.Int("worker-reuse", defaultWorkerReuse, "runs of one principal per worker in the process tier (1: one per worker)")
	only := fs.String("workloads", "", "workloads to measure, comma-separated (default: all): "+strings.Join(bench.Workloads(), ", "))
	loadFor := fs.Duration("load-duration", 10*time.Second, "how long the load workload runs in each tier")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErr(e, fs, "unexpected argument %q", pos[0])
	}
	if *runs < 1 {
		return usageErr(e, fs, "--runs must be at least 1")
	}
	if *reuse < 1 {
		return usageErr(e, fs, "--worker-reuse must be at least 1")
	}
	if *loadFor <= 0 {
		return usageErr(e, fs, "--load-duration must be positive")
	}
	cfg := bench.Config{Tiers: strings.Split(*tiers, ","), Runs: *runs, Reuse: *reuse, LoadDuration: *loadFor, Log: e.stderr,
		NewPool: benchPool}
	if *only != "" {
		cfg.Workloads = strings.Split(*only, ",")
	}
	for _, t := range cfg.Tiers {
		if t != "inprocess" && t != "process" {
			return usageErr(e, fs, "unknown tier %q: want inprocess or process", t)
		}
	}
	for _, w := range cfg.Workloads {
		if !slices.Contains(bench.Workloads(), w) {
			return usageErr(e, fs, "unknown workload %q: want one of %s", w, strings.Join(bench.Workloads(), ", "))
		}
	}
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall bench: %v\n", err)
		return exitFailure
	}
	if *asJSON {
		err = rep.WriteJSON(e.stdout)
	} else {
		err = rep.WriteTable(e.stdout)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall bench: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// benchPool starts the process tier's pool as serve does, for the bench.
func benchPool(reuse int, limits sandbox.Limits, onStart func(pid int) error) (*process.Pool, string, func(), error) {
	c := &common{isolation: "process", timeout: limits.Timeout, reuse: reuse}
	exe, tier, closeExec, err := newExecutorWith(c, limits, nil, onStart)
	if err != nil {
		return nil, "", nil, err
	}
	return exe.(*process.Pool), tier, closeExec, nil
}
