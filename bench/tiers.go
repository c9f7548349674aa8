package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/examples/market"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/process"
	"github.com/sandcall/sandcall/tools"
)

// broker serves the demo toolset without the market tools' injected
// failures: the workloads time the programs, not retry back-offs, and every
// run's result is checked.
func broker() (*bindings.Broker, error) {
	cat, err := tools.NewCatalog(demo.ToolsWith(market.Options{})...)
	if err != nil {
		return nil, err
	}
	return bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
}

// measure runs w n times (after warm-up runs) and returns the durations.
func measure(ctx context.Context, r *bindings.Runner, w demo.Workload, n, warm int, before func()) ([]time.Duration, error) {
	return measureProgram(ctx, r, w, sandbox.Program{Source: w.Program, Input: w.Input}, n, warm, before)
}

// measureProgram is measure for w's result and calls, written as prog.
func measureProgram(ctx context.Context, r *bindings.Runner, w demo.Workload, prog sandbox.Program, n, warm int, before func()) ([]time.Duration, error) {
	if before == nil {
		before = func() {}
	}
	var ds []time.Duration
	for i := 0; i < warm+n; i++ {
		d, _, err := timedRun(ctx, r, w, prog, before)
		if err != nil {
			return nil, err
		}
		if i >= warm {
			ds = append(ds, d)
		}
	}
	return ds, nil
}

// measureDeadline times a runaway loop under a 1 s limit: how far past its
// deadline a run ends (the process tier must stay within +250 ms).
func measureDeadline(ctx context.Context, r *bindings.Runner, tier string, n int, before func()) (Row, error) {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		if before != nil {
			before()
		}
		t0 := time.Now()
		res := r.Run(ctx, bindings.RunRequest{Program: sandbox.Program{Source: "for (;;) {}"}, Limits: sandbox.Limits{Timeout: time.Second}})
		ds = append(ds, time.Since(t0))
		if res.OK || res.Error.Code != sandbox.ETimeout {
			return Row{}, fmt.Errorf("deadline: got %v, want E_TIMEOUT", res.Error)
		}
	}
	return summarize("deadline-1s", tier, ds, 0), nil
}

func inprocess(ctx context.Context, n int, skip map[string]bool) ([]Row, error) {
	b, err := broker()
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, c := range []struct {
		name, workload string
		cfg            js.Config
	}{
		{"expense", "expense", js.Config{}},
		{"expense-cold", "expense", js.Config{ProgramCacheSize: -1}},
		{"fanout", "fanout", js.Config{}},
		{"market", "market", js.Config{}},
	} {
		if skip[c.name] {
			continue
		}
		r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(c.cfg), Tier: "inprocess"})
		if err != nil {
			return nil, err
		}
		w := workloadNamed(c.workload)
		meter := newCPUMeter(0, nil)
		ds, err := measure(ctx, r, w, n, 3, nil)
		if err != nil {
			return nil, err
		}
		row := summarize(c.name, "inprocess", ds, rateCalls(w))
		row.ServerCPUMS, _ = meter.perJob(n + 3)
		rows = append(rows, row)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{}), Tier: "inprocess"})
	if err != nil {
		return nil, err
	}
	d, err := measureDeadline(ctx, r, "inprocess", min(n, 5), nil)
	if err != nil {
		return nil, err
	}
	return append(rows, d), nil
}

// processTier measures the process tier with a warm pool: before each
// timed run it waits (untimed) until every fresh worker is ready, as a
// server between requests would be. With reuse 1 every run is a new worker
// that compiles the program (expense here is then "expense-cold" of the
// worker); with reuse N a worker serves N runs and keeps its compiled
// programs, and every Nth run pays a worker start.
func processTier(ctx context.Context, cfg Config, skip map[string]bool) ([]Row, string, error) {
	bp, err := newPool(cfg, sandbox.DefaultLimits())
	if err != nil {
		return nil, "", err
	}
	defer bp.close()
	var rows []Row
	for _, w := range demo.Workloads() {
		if skip[w.Name] {
			continue
		}
		meter := newCPUMeter(0, bp.workers)
		ds, err := measure(ctx, bp.r, w, cfg.Runs, 2, bp.waitWarm)
		if err != nil {
			return nil, "", err
		}
		row := summarize(w.Name, "process", ds, rateCalls(w))
		row.ServerCPUMS, row.WorkerCPUMS = meter.perJob(cfg.Runs + 2)
		rows = append(rows, row)
	}
	d, err := measureDeadline(ctx, bp.r, "process", min(cfg.Runs, 5), bp.waitWarm)
	if err != nil {
		return nil, "", err
	}
	rows = append(rows, d)
	return rows, bp.note(), nil
}

// rateCalls is the call count a row's calls/s is computed from: only the
// fan-out's.
func rateCalls(w demo.Workload) int {
	if w.Name == "fanout" {
		return w.Calls
	}
	return 0
}

// pool is the process tier as the bench measures it: the default pool of
// confined workers behind the demo broker.
type pool struct {
	r     *bindings.Runner
	pool  *process.Pool
	tier  string
	close func()

	mu   sync.Mutex
	pids []int // every worker started, in order
}

// newPool starts cfg's pool for jobs within limits, behind the demo
// broker; languages nil means JavaScript.
func newPool(cfg Config, limits sandbox.Limits, languages ...sandbox.Language) (*pool, error) {
	b, err := broker()
	if err != nil {
		return nil, err
	}
	bp := &pool{}
	bp.pool, bp.tier, bp.close, err = cfg.NewPool(cfg.Reuse, limits.Resolve(), func(pid int) error {
		bp.mu.Lock()
		bp.pids = append(bp.pids, pid)
		bp.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if bp.r, err = bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: bp.pool, Tier: bp.tier,
		Languages: languages, Limits: limits}); err != nil {
		bp.close()
		return nil, err
	}
	return bp, nil
}

// waitWarm waits (untimed) until every fresh worker is ready, as a server
// between requests would be.
func (bp *pool) waitWarm() {
	for deadline := time.Now().Add(10 * time.Second); bp.pool.Ready() < bp.pool.Size() && time.Now().Before(deadline); {
		time.Sleep(200 * time.Microsecond)
	}
}

func (bp *pool) workers() []int {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return slices.Clone(bp.pids)
}

// note names the tier's confinement layers (the memory workload measures
// what workers hold at rest).
func (bp *pool) note() string {
	return "process tier: " + bp.tier
}

// interleaveBlock is how many runs of one tier go in a row before the other
// tier's: a reused worker collects a job's garbage after sending its
// outcome, which would otherwise slow every in-process run that follows a
// process-tier one; in blocks it touches only a block's first run.
const interleaveBlock = 5

// interleaved measures the named standard workloads in both tiers, the
// tiers interleaved in blocks of interleaveBlock runs (which goes first
// alternates), so that both see the same moments of a shared machine:
// their ratio is what the acceptance figures compare. The server's CPU is
// counted per tier over its own runs; the workers' over the whole
// workload, every worker's time being the process tier's (a reused worker
// collects a job's garbage after it).
func interleaved(ctx context.Context, cfg Config, names []string) ([]Row, string, error) {
	b, err := broker()
	if err != nil {
		return nil, "", err
	}
	in, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{}), Tier: "inprocess"})
	if err != nil {
		return nil, "", err
	}
	bp, err := newPool(cfg, sandbox.DefaultLimits())
	if err != nil {
		return nil, "", err
	}
	defer bp.close()
	const warm = 3
	n := cfg.Runs
	var rows []Row
	for _, name := range names {
		w := workloadNamed(name)
		prog := sandbox.Program{Source: w.Program, Input: w.Input}
		var ds [2][]time.Duration
		var server [2]time.Duration
		workers := newCPUMeter(0, bp.workers)
		for b := 0; b*interleaveBlock < warm+n; b++ {
			for k := range 2 {
				tier := (b + k) % 2 // 0: in-process, 1: process
				r, before := in, func() {}
				if tier == 1 {
					r, before = bp.r, bp.waitWarm
				}
				for i := b * interleaveBlock; i < min((b+1)*interleaveBlock, warm+n); i++ {
					d, cpu, err := timedRun(ctx, r, w, prog, before)
					if err != nil {
						return nil, "", err
					}
					if i >= warm {
						ds[tier] = append(ds[tier], d)
					}
					server[tier] += cpu
				}
			}
		}
		runs := warm + n
		perRun := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(runs) }
		rin := summarize(name, "inprocess", ds[0], rateCalls(w))
		rin.ServerCPUMS = perRun(server[0])
		rp := summarize(name, "process", ds[1], rateCalls(w))
		rp.ServerCPUMS = perRun(server[1])
		_, rp.WorkerCPUMS = workers.perJob(runs)
		rows = append(rows, rin, rp)
	}
	note := bp.note() + fmt.Sprintf("; expense, fanout and market: the tiers interleaved in blocks of %d runs", interleaveBlock)
	for i := 0; i+1 < len(rows); i += 2 {
		in, pr := rows[i], rows[i+1]
		switch {
		case in.CallsPerS > 0 && pr.CallsPerS > 0:
			note += fmt.Sprintf("\n%s: process tier %.2fx the in-process calls/s (medians, interleaved)", in.Workload, pr.CallsPerS/in.CallsPerS)
		case in.MedianMS > 0:
			note += fmt.Sprintf("\n%s: process tier %.2fx the in-process time (medians, interleaved)", in.Workload, pr.MedianMS/in.MedianMS)
		}
	}
	return rows, note, nil
}

// timedRun runs prog once after before (untimed) and checks its result
// against w; it returns the run's wall time and this process's CPU time
// over the run.
func timedRun(ctx context.Context, r *bindings.Runner, w demo.Workload, prog sandbox.Program, before func()) (time.Duration, time.Duration, error) {
	before()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	t0 := time.Now()
	res := r.Run(ctx, bindings.RunRequest{Program: prog})
	d := time.Since(t0)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	if !res.OK {
		return 0, 0, fmt.Errorf("%s: %v", w.Name, res.Error)
	}
	if string(res.Result) != w.Want || res.Calls.Total != w.Calls {
		return 0, 0, fmt.Errorf("%s: wrong result %.60s after %d calls", w.Name, res.Result, res.Calls.Total)
	}
	cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()) + time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano())
	return d, cpu, nil
}

// vmRSS returns a process's resident memory in KiB (VmRSS, as ps reports
// it), or 0 if it is gone.
func vmRSS(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb
		}
	}
	return 0
}

// marketBytes says what the market workload saves: the bytes of raw tool
// results a one-call-per-turn agent would read against the program's result.
func marketBytes(ctx context.Context) string {
	w := workloadNamed("market")
	d, err := market.MeasureDirect(ctx, market.Tools(market.Options{}), market.Watchlist())
	if err != nil || len(w.Want) == 0 {
		return ""
	}
	return fmt.Sprintf("market: a one-call-per-turn agent reads %s bytes of raw results (%d calls); the program returns %s bytes (%.0fx less)",
		thousands(int64(d.Bytes)), d.Calls, thousands(int64(len(w.Want))), float64(d.Bytes)/float64(len(w.Want)))
}
