package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/examples/market"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/process"
	"github.com/sandcall/sandcall/sandbox/wasm"
	"github.com/sandcall/sandcall/tools"
)

const benchExamples = `  sandcall bench                         # every workload in both tiers, as a table
  sandcall bench --json                  # the same as JSON (docs/cli.md)
  sandcall bench --tier process --runs 50
  sandcall bench --workloads first-run-return1 --runs 75   # one workload, the tiers interleaved
`

// benchRow is one line of `sandcall bench --json` (docs/cli.md).
type benchRow struct {
	Workload  string  `json:"workload"`
	Tier      string  `json:"tier"`
	Runs      int     `json:"runs"`
	MedianMS  float64 `json:"median_ms"`
	MinMS     float64 `json:"min_ms"`
	MaxMS     float64 `json:"max_ms"`
	CallsPerS float64 `json:"calls_per_s"`
	// CPU per run, in milliseconds: the server's (this process, or the
	// serve process of the burst) and its workers' (start-up included),
	// over the timed runs and their warm-ups.
	ServerCPUMS float64 `json:"server_cpu_ms,omitempty"`
	WorkerCPUMS float64 `json:"worker_cpu_ms,omitempty"`
}

// cmdBench runs the standard workloads (demo.Workloads) in each tier
// and reports medians. Every run is checked against its expected result.
func cmdBench(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "bench", "[--json] [--tier inprocess,process] [--runs N]", benchExamples)
	asJSON := fs.Bool("json", false, "print JSON rows: workload, tier, runs, median_ms, min_ms, max_ms, calls_per_s")
	tiers := fs.String("tier", "inprocess,process", "tiers to measure, comma-separated")
	runs := fs.Int("runs", 30, "timed runs per workload (first-run uses a third of them, burst a tenth)")
	reuse := fs.Int("worker-reuse", defaultWorkerReuse, "runs of one principal per worker in the process tier (1: one per worker)")
	only := fs.String("workloads", "", "workloads to measure, comma-separated (default: all): "+strings.Join(benchWorkloads, ", "))
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
	want := func(string) bool { return true }
	if *only != "" {
		set := map[string]bool{}
		for _, w := range strings.Split(*only, ",") {
			if !slices.Contains(benchWorkloads, w) {
				return usageErr(e, fs, "unknown workload %q: want one of %s", w, strings.Join(benchWorkloads, ", "))
			}
			set[w] = true
		}
		want = func(w string) bool { return set[w] }
	}
	wantAny := func(ws ...string) bool { return slices.ContainsFunc(ws, want) }
	tierList := strings.Split(*tiers, ",")
	for _, tier := range tierList {
		if tier != "inprocess" && tier != "process" {
			return usageErr(e, fs, "unknown tier %q: want inprocess or process", tier)
		}
	}
	var rows []benchRow
	var notes []string
	var expenseWasm []byte
	if want("expense-wasm") {
		var why string
		if expenseWasm, why = buildExpenseWasm(ctx); why != "" {
			fmt.Fprintf(e.stderr, "sandcall bench: skipping expense-wasm: %s\n", why)
		}
	}
	// With both tiers, the standard workloads run the tiers interleaved,
	// run by run, so that both see the same moments of a shared machine
	// and their ratio holds even when the load drifts.
	var skip map[string]bool
	if len(tierList) == 2 && wantAny("expense", "fanout", "market") {
		var names []string
		for _, w := range demo.Workloads() {
			if want(w.Name) {
				names = append(names, w.Name)
			}
		}
		rs, note, err := benchInterleaved(ctx, *runs, *reuse, names)
		if err != nil {
			fmt.Fprintf(e.stderr, "sandcall bench: %v\n", err)
			return exitFailure
		}
		rows = append(rows, rs...)
		notes = append(notes, note)
		skip = map[string]bool{"expense": true, "fanout": true, "market": true}
	}
	for _, tier := range tierList {
		var rs []benchRow
		var err error
		if wantAny("expense", "expense-cold", "fanout", "market", "deadline-1s") && (skip == nil || wantAny("expense-cold", "deadline-1s")) {
			if tier == "inprocess" {
				rs, err = benchInprocess(ctx, *runs, skip)
			} else {
				var note string
				rs, note, err = benchProcess(ctx, *runs, *reuse, skip)
				if note != "" && skip == nil { // else the interleaved run gave it
					notes = append(notes, note)
				}
			}
			if err != nil {
				fmt.Fprintf(e.stderr, "sandcall bench: %s: %v\n", tier, err)
				return exitFailure
			}
		}
		if wantAny("expense-wasm", "fanout-wasm") {
			ws, err := benchWasm(ctx, tier, *runs, expenseWasm, *reuse)
			if err != nil {
				fmt.Fprintf(e.stderr, "sandcall bench: %s wasm: %v\n", tier, err)
				return exitFailure
			}
			rs = append(rs, ws...)
		}
		if tier == "process" && want("burst") {
			br, err := benchBurst(ctx, max(*runs/10, 1), *reuse)
			if err != nil {
				fmt.Fprintf(e.stderr, "sandcall bench: burst: %v\n", err)
				return exitFailure
			}
			rs = append(rs, br)
		}
		for _, r := range rs {
			if want(r.Workload) && !skip[r.Workload] {
				rows = append(rows, r)
			}
		}
	}
	// A fresh `sandcall run` in each tier, the tiers interleaved run by
	// run, so that both see the same moments of a shared machine.
	expense := workloadNamed("expense")
	for _, fr := range []struct{ name, src, want string }{
		{"first-run", expense.Program, expense.Want},
		{"first-run-return1", "return 1", "1"},
	} {
		if !want(fr.name) {
			continue
		}
		rs, cpu, err := benchFirstRuns(ctx, tierList, max(*runs/3, 3), fr.name, fr.src, fr.want)
		if err != nil {
			fmt.Fprintf(e.stderr, "sandcall bench: %s: %v\n", fr.name, err)
			return exitFailure
		}
		rows = append(rows, rs...)
		if n := firstRunRatio(rs, cpu); n != "" {
			notes = append(notes, n)
		}
	}
	if *asJSON {
		b, _ := json.MarshalIndent(rows, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", b)
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\ttier\truns\tmedian ms\tmin ms\tmax ms\tcalls/s\tserver cpu ms/run\tworker cpu ms/run\t")
	for _, r := range rows {
		cps := ""
		if r.CallsPerS > 0 {
			cps = strconv.FormatFloat(r.CallsPerS, 'f', 0, 64)
		}
		cpu := func(v float64) string {
			if v == 0 {
				return ""
			}
			return strconv.FormatFloat(v, 'f', 1, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%s\t%s\t%s\t\n", r.Workload, r.Tier, r.Runs, r.MedianMS, r.MinMS, r.MaxMS, cps,
			cpu(r.ServerCPUMS), cpu(r.WorkerCPUMS))
	}
	tw.Flush()
	notes = append(notes, wasmRatios(rows)...)
	if want("market") {
		if n := marketBytes(ctx); n != "" {
			notes = append(notes, n)
		}
	}
	for _, n := range notes {
		fmt.Fprintln(e.stdout, n)
	}
	return exitOK
}

// benchBroker serves the demo toolset without the market tools' injected
// failures: the workloads time the programs, not retry back-offs, and every
// run's result is checked.
func benchBroker() (*bindings.Broker, error) {
	cat, err := tools.NewCatalog(demo.ToolsWith(market.Options{})...)
	if err != nil {
		return nil, err
	}
	return bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
}

// measure runs w n times (after warm-up runs) and summarizes the durations.
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
func measureDeadline(ctx context.Context, r *bindings.Runner, tier string, n int, before func()) (benchRow, error) {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		if before != nil {
			before()
		}
		t0 := time.Now()
		res := r.Run(ctx, bindings.RunRequest{Program: sandbox.Program{Source: "for (;;) {}"}, Limits: sandbox.Limits{Timeout: time.Second}})
		ds = append(ds, time.Since(t0))
		if res.OK || res.Error.Code != sandbox.ETimeout {
			return benchRow{}, fmt.Errorf("deadline: got %v, want E_TIMEOUT", res.Error)
		}
	}
	return summarize("deadline-1s", tier, ds, 0), nil
}

func summarize(workload, tier string, ds []time.Duration, calls int) benchRow {
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	med := ds[len(ds)/2]
	if len(ds)%2 == 0 {
		med = (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
	}
	r := benchRow{Workload: workload, Tier: tier, Runs: len(ds), MedianMS: ms(med), MinMS: ms(ds[0]), MaxMS: ms(ds[len(ds)-1])}
	if calls > 0 && med > 0 {
		r.CallsPerS = float64(calls) / med.Seconds()
	}
	return r
}

func benchInprocess(ctx context.Context, n int, skip map[string]bool) ([]benchRow, error) {
	broker, err := benchBroker()
	if err != nil {
		return nil, err
	}
	var rows []benchRow
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
		r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(c.cfg), Tier: "inprocess"})
		if err != nil {
			return nil, err
		}
		w := workloadNamed(c.workload)
		meter := newCPUMeter(0, nil)
		ds, err := measure(ctx, r, w, n, 3, nil)
		if err != nil {
			return nil, err
		}
		calls := 0
		if c.workload == "fanout" {
			calls = w.Calls
		}
		row := summarize(c.name, "inprocess", ds, calls)
		row.ServerCPUMS, _ = meter.perJob(n + 3)
		rows = append(rows, row)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{}), Tier: "inprocess"})
	if err != nil {
		return nil, err
	}
	d, err := measureDeadline(ctx, r, "inprocess", min(n, 5), nil)
	if err != nil {
		return nil, err
	}
	return append(rows, d), nil
}

// benchProcess measures the process tier with a warm pool: before each
// timed run it waits (untimed) until every fresh worker is ready, as a
// server between requests would be. With reuse 1 every run is a new worker
// that compiles the program (expense here is then "expense-cold" of the
// worker); with reuse N a worker serves N runs and keeps its compiled
// programs, and every Nth run pays a worker start.
func benchProcess(ctx context.Context, n, reuse int, skip map[string]bool) ([]benchRow, string, error) {
	bp, err := newBenchPool(reuse)
	if err != nil {
		return nil, "", err
	}
	defer bp.close()
	var rows []benchRow
	for _, w := range demo.Workloads() {
		if skip[w.Name] {
			continue
		}
		meter := newCPUMeter(0, bp.workers)
		ds, err := measure(ctx, bp.r, w, n, 2, bp.waitWarm)
		if err != nil {
			return nil, "", err
		}
		row := summarize(w.Name, "process", ds, rateCalls(w))
		row.ServerCPUMS, row.WorkerCPUMS = meter.perJob(n + 2)
		rows = append(rows, row)
	}
	d, err := measureDeadline(ctx, bp.r, "process", min(n, 5), bp.waitWarm)
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

// benchPool is the process tier as the bench measures it: the default
// pool of confined workers behind the demo broker.
type benchPool struct {
	r     *bindings.Runner
	pool  *process.Pool
	tier  string
	close func()

	mu   sync.Mutex
	pids []int // every worker started, in order
}

func newBenchPool(reuse int) (*benchPool, error) {
	broker, err := benchBroker()
	if err != nil {
		return nil, err
	}
	bp := &benchPool{}
	c := &common{isolation: "process", timeout: sandbox.DefaultLimits().Timeout, reuse: reuse}
	exe, tier, closeExec, err := newExecutorWith(c, sandbox.DefaultLimits(), nil, func(pid int) error {
		bp.mu.Lock()
		bp.pids = append(bp.pids, pid)
		bp.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	bp.pool, bp.tier, bp.close = exe.(*process.Pool), tier, closeExec
	if bp.r, err = bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: bp.pool, Tier: tier}); err != nil {
		closeExec()
		return nil, err
	}
	return bp, nil
}

// waitWarm waits (untimed) until every fresh worker is ready, as a server
// between requests would be.
func (bp *benchPool) waitWarm() {
	for deadline := time.Now().Add(10 * time.Second); bp.pool.Ready() < bp.pool.Size() && time.Now().Before(deadline); {
		time.Sleep(200 * time.Microsecond)
	}
}

func (bp *benchPool) workers() []int {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	return slices.Clone(bp.pids)
}

// note names the tier and the RSS of the idle, warm workers.
func (bp *benchPool) note() string {
	bp.waitWarm()
	pids := bp.workers()
	var rss []string
	for _, pid := range pids[max(0, len(pids)-bp.pool.Size()):] {
		if kb := vmRSS(pid); kb > 0 {
			rss = append(rss, fmt.Sprintf("%.1f MB", float64(kb)/1024))
		}
	}
	return fmt.Sprintf("process tier: %s; RSS of idle warm workers: %s", bp.tier, strings.Join(rss, ", "))
}

// interleaveBlock is how many runs of one tier go in a row before the other
// tier's: a reused worker collects a job's garbage after sending its
// outcome, which would otherwise slow every in-process run that follows a
// process-tier one; in blocks it touches only a block's first run.
const interleaveBlock = 5

// benchInterleaved measures the named standard workloads in both tiers,
// the tiers interleaved in blocks of interleaveBlock runs (which goes first
// alternates), so that both see the same moments of a shared machine:
// their ratio is what the acceptance figures compare. The server's CPU is counted per tier over its
// own runs; the workers' over the whole workload, every worker's time being
// the process tier's (a reused worker collects a job's garbage after it).
func benchInterleaved(ctx context.Context, n, reuse int, names []string) ([]benchRow, string, error) {
	broker, err := benchBroker()
	if err != nil {
		return nil, "", err
	}
	in, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{}), Tier: "inprocess"})
	if err != nil {
		return nil, "", err
	}
	bp, err := newBenchPool(reuse)
	if err != nil {
		return nil, "", err
	}
	defer bp.close()
	const warm = 3
	var rows []benchRow
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

// benchWorkloads names every workload bench measures (--workloads).
var benchWorkloads = []string{"expense", "expense-cold", "fanout", "market", "deadline-1s",
	"expense-wasm", "fanout-wasm", "first-run", "first-run-return1", "burst"}

// benchFirstRuns times a fresh `sandcall run` process of src, from start to
// exit, whose result must be want: what a one-shot CLI user waits for. It
// makes n timed runs in each tier, the tiers taking turns, and returns one
// row per tier named name, and the median CPU time of a run in each tier
// (the command's and the workers' it reaped, user and system).
func benchFirstRuns(ctx context.Context, tiers []string, n int, name, src, want string) ([]benchRow, []time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "sandcall-bench-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	prog := filepath.Join(dir, "program.js")
	if err := os.WriteFile(prog, []byte(src), 0o644); err != nil {
		return nil, nil, err
	}
	ds := make([][]time.Duration, len(tiers))
	cpus := make([][]time.Duration, len(tiers))
	for i := 0; i < n+1; i++ {
		for ti, tier := range tiers {
			cmd := exec.CommandContext(ctx, self, "run", "--demo", "--json", "--isolation", tier, "--workers", "1", prog)
			t0 := time.Now()
			out, err := cmd.Output()
			d := time.Since(t0)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %v: %s", tier, err, out)
			}
			var res sandbox.Result
			if err := json.Unmarshal(out, &res); err != nil || string(res.Result) != want {
				return nil, nil, fmt.Errorf("%s: wrong result: %.80s", tier, out)
			}
			if i > 0 { // the first one warms the page cache
				ds[ti] = append(ds[ti], d)
				cpus[ti] = append(cpus[ti], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			}
		}
	}
	rows := make([]benchRow, len(tiers))
	cpu := make([]time.Duration, len(tiers))
	for ti, tier := range tiers {
		rows[ti] = summarize(name, tier, ds[ti], 0)
		slices.Sort(cpus[ti])
		cpu[ti] = cpus[ti][len(cpus[ti])/2]
	}
	return rows, cpu, nil
}

// firstRunRatio compares the process tier's fresh run with the in-process
// one's, measured in the same turns (the target: at most 2x), in
// wall time and in CPU time (cpu[i] is rows[i]'s median).
func firstRunRatio(rows []benchRow, cpu []time.Duration) string {
	var in, pr float64
	var inCPU, prCPU time.Duration
	for i, r := range rows {
		switch r.Tier {
		case "inprocess":
			in, inCPU = r.MedianMS, cpu[i]
		case "process":
			pr, prCPU = r.MedianMS, cpu[i]
		}
	}
	if in == 0 || pr == 0 || inCPU == 0 {
		return ""
	}
	return fmt.Sprintf("%s: process tier %.2fx the in-process tier (medians, interleaved); CPU per run %.1f vs %.1f ms (%.2fx)",
		rows[0].Workload, pr/in, float64(prCPU.Microseconds())/1000, float64(inCPU.Microseconds())/1000, float64(prCPU)/float64(inCPU))
}

func workloadNamed(name string) demo.Workload {
	for _, w := range demo.Workloads() {
		if w.Name == name {
			return w
		}
	}
	panic("no workload " + name)
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
		comma(int64(d.Bytes)), d.Calls, comma(int64(len(w.Want))), float64(d.Bytes)/float64(len(w.Want)))
}

// expenseWasmPkg is the Go guest of the expense workload.
const expenseWasmPkg = "github.com/sandcall/sandcall/examples/expense/wasm"

// buildExpenseWasm builds the Go guest of the expense workload with the
// installed Go (GOOS=wasip1 GOARCH=wasm, as its doc says). It needs the
// sandcall source: it works when bench runs inside the module's tree. On
// failure it returns why, and bench skips the expense-wasm rows.
func buildExpenseWasm(ctx context.Context) (module []byte, why string) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return nil, "no go command on PATH to build " + expenseWasmPkg
	}
	dir, err := os.MkdirTemp("", "sandcall-bench-wasm-")
	if err != nil {
		return nil, err.Error()
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "expense.wasm")
	cmd := exec.CommandContext(ctx, gobin, "build", "-trimpath", "-ldflags=-s -w", "-o", out, expenseWasmPkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("go build %s (run bench inside the sandcall source tree): %v: %s", expenseWasmPkg, err, firstLines(string(b), 3))
	}
	module, err = os.ReadFile(out)
	if err != nil {
		return nil, err.Error()
	}
	return module, ""
}

func firstLines(s string, n int) string {
	ls := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	return strings.Join(ls[:min(n, len(ls))], "; ")
}

// benchWasm measures the WebAssembly workloads in a tier: expense-wasm
// (the Go guest, if it was built) and fanout-wasm (demo.FanoutModule, 1,000
// calls through call_async and wait). In-process, the module is compiled
// once by wazero's interpreter and cached, so the timed runs are warm; in
// the process tier a worker compiles the module with wazero's compiler and
// keeps it for the runs it serves (with --worker-reuse 1, every run is a new
// worker, so every run includes compilation). The Go guest takes seconds a run in the process tier: it
// gets at most 5 timed runs there, 10 in-process.
func benchWasm(ctx context.Context, tier string, n int, expenseModule []byte, reuse int) ([]benchRow, error) {
	broker, err := benchBroker()
	if err != nil {
		return nil, err
	}
	var (
		exec     sandbox.Executor
		before   func()
		tierName = tier
		langs    = []sandbox.Language{sandbox.WASM}
		limits   = sandbox.Limits{Timeout: sandbox.MaxTimeout}
		maxRuns  = 10
	)
	switch tier {
	case "inprocess":
		w, err := wasm.New(wasm.Config{})
		if err != nil {
			return nil, err
		}
		defer w.Close(context.Background())
		exec = w
	case "process":
		// The longest deadline, as in-process: a run of the Go guest takes
		// seconds, and over the 10 s default on a loaded machine; bench
		// measures, and every run is checked, so a deadline only guards
		// against a hang.
		wl := sandbox.Limits{Timeout: sandbox.MaxTimeout}.Resolve()
		c := &common{isolation: "process", timeout: wl.Timeout, reuse: reuse}
		ex, name, closeExec, err := newExecutorWith(c, wl, nil, nil)
		if err != nil {
			return nil, err
		}
		defer closeExec()
		pool := ex.(*process.Pool)
		exec, tierName, maxRuns = pool, name, 5
		before = func() {
			for deadline := time.Now().Add(10 * time.Second); pool.Ready() < pool.Size() && time.Now().Before(deadline); {
				time.Sleep(200 * time.Microsecond)
			}
		}
	default:
		return nil, fmt.Errorf("unknown tier %q", tier)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: exec, Tier: tierName, Languages: langs, Limits: limits})
	if err != nil {
		return nil, err
	}
	var rows []benchRow
	if expenseModule != nil {
		w := workloadNamed("expense")
		warm := 1 // in-process, or a reused worker: compiles and caches the module
		if tier == "process" && reuse <= 1 {
			warm = 0 // every run compiles in a new worker: nothing to warm
		}
		ds, err := measureProgram(ctx, r, w, sandbox.Program{Language: sandbox.WASM, Module: expenseModule}, min(n, maxRuns), warm, before)
		if err != nil {
			return nil, fmt.Errorf("expense-wasm: %w", err)
		}
		rows = append(rows, summarize("expense-wasm", tier, ds, 0))
	}
	w := workloadNamed("fanout")
	ds, err := measureProgram(ctx, r, w, sandbox.Program{Language: sandbox.WASM, Module: demo.FanoutModule}, n, 2, before)
	if err != nil {
		return nil, fmt.Errorf("fanout-wasm: %w", err)
	}
	return append(rows, summarize("fanout-wasm", tier, ds, w.Calls)), nil
}

// wasmRatios compares each WebAssembly workload's median with the
// JavaScript workload's in the same tier (the target: a cached
// module's run within 2x of the JS run).
func wasmRatios(rows []benchRow) []string {
	median := map[string]float64{}
	for _, r := range rows {
		median[r.Workload+"/"+r.Tier] = r.MedianMS
	}
	var notes []string
	for _, r := range rows {
		base, ok := strings.CutSuffix(r.Workload, "-wasm")
		if !ok || median[base+"/"+r.Tier] <= 0 {
			continue
		}
		notes = append(notes, fmt.Sprintf("%s/%s: %.2fx the median of %s (JavaScript)", r.Workload, r.Tier, r.MedianMS/median[base+"/"+r.Tier], base))
	}
	return notes
}
