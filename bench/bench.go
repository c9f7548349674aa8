// Package bench measures sandcall's standard workloads (examples/demo) in
// each isolation tier: what `sandcall bench` prints. Every run is checked
// against its workload's exact result; figures are medians.
//
// The workloads: expense (56 calls), its cold variant (no program cache),
// the 1,000-call fan-out and the market report, in-process and in the
// process tier (run side by side, in blocks, so that their ratio holds on a
// shared machine); a runaway loop under a 1 s deadline; the expense program
// as WebAssembly (the Go guest and the C guest, both embedded, so bench runs
// from any directory) and the fan-out as WebAssembly; a fresh `sandcall run`
// of the expense program and of `return 1`; a burst of 64 concurrent expense
// runs through `sandcall serve --http`; a sustained load of ten HTTP clients
// sending small runs; and the memory of an idle `sandcall serve` over stdio
// (the server and each warm worker) and what it holds after a burst.
//
// The workloads that start sandcall itself (fresh runs, burst, load,
// memory) run Config.Exe, this executable by default; the process tier's
// pool comes from Config.NewPool, the command's own wiring.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/process"
)

// Config says what to measure. Zero values are the documented defaults.
type Config struct {
	// Tiers to measure: "inprocess", "process" or both (the default).
	Tiers []string
	// Runs is the number of timed runs per workload (a fresh run uses a
	// third of them, the burst a tenth). If zero, 30.
	Runs int
	// Reuse is how many runs of one principal a process-tier worker serves.
	// If zero, 64 (the command's default).
	Reuse int
	// Workloads to measure (see Workloads); nil means all.
	Workloads []string
	// LoadDuration is how long the load workload runs in each tier. If
	// zero, 10 s.
	LoadDuration time.Duration
	// LoadClients is how many clients the load workload runs. If zero, 10.
	LoadClients int
	// Exe is the sandcall binary that the fresh-run, burst, load and memory
	// workloads start. If empty, this executable.
	Exe string
	// NewPool starts the process tier's pool for reuse runs per worker and
	// jobs within limits, calling onStart (if not nil) with each worker's
	// PID; it returns the pool, the tier's name (its confinement layers)
	// and a function that closes it. Required for the process tier's
	// in-process-driven workloads.
	NewPool func(reuse int, limits sandbox.Limits, onStart func(pid int) error) (*process.Pool, string, func(), error)
	// Log, if set, receives notes on skipped workloads.
	Log io.Writer
}

// Row is one line of `sandcall bench --json`.
type Row struct {
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
	// The load workload: the 99th percentile of a run's latency and the
	// runs completed per second, all clients together.
	P99MS    float64 `json:"p99_ms,omitempty"`
	RunsPerS float64 `json:"runs_per_s,omitempty"`
	// The memory workloads: resident memory as ps reports it (VmRSS), in
	// MB: the server's, each worker's, and their total; for a burst, the
	// highest total seen and the time the total took to come back to the
	// idle level (-1: not within the window).
	ServerRSSMB float64   `json:"server_rss_mb,omitempty"`
	WorkerRSSMB []float64 `json:"worker_rss_mb,omitempty"`
	RSSMB       float64   `json:"rss_mb,omitempty"`
	PeakRSSMB   float64   `json:"peak_rss_mb,omitempty"`
	SettleMS    *float64  `json:"settle_ms,omitempty"`
}

// Report is what Run measured: the rows and notes (ratios, the tier's
// layers) for people to read.
type Report struct {
	Rows  []Row
	Notes []string
}

// Workloads names every workload bench measures, in order.
func Workloads() []string {
	return slices.Clone(workloads)
}

var workloads = []string{"expense", "expense-cold", "fanout", "market", "deadline-1s",
	"expense-wasm", "expense-wasm-c", "fanout-wasm", "first-run", "first-run-return1", "burst", "load", "memory"}

// Run measures the workloads cfg names and returns the rows and notes.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if len(cfg.Tiers) == 0 {
		cfg.Tiers = []string{"inprocess", "process"}
	}
	for _, tier := range cfg.Tiers {
		if tier != "inprocess" && tier != "process" {
			return nil, fmt.Errorf("unknown tier %q: want inprocess or process", tier)
		}
	}
	for _, w := range cfg.Workloads {
		if !slices.Contains(workloads, w) {
			return nil, fmt.Errorf("unknown workload %q: want one of %s", w, strings.Join(workloads, ", "))
		}
	}
	if cfg.Runs <= 0 {
		cfg.Runs = 30
	}
	if cfg.Reuse <= 0 {
		cfg.Reuse = 64
	}
	if cfg.LoadDuration <= 0 {
		cfg.LoadDuration = 10 * time.Second
	}
	if cfg.LoadClients <= 0 {
		cfg.LoadClients = 10
	}
	if cfg.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cfg.Exe = exe
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if slices.Contains(cfg.Tiers, "process") && cfg.NewPool == nil {
		return nil, errors.New("bench: the process tier needs Config.NewPool")
	}
	want := func(string) bool { return true }
	if len(cfg.Workloads) > 0 {
		want = func(w string) bool { return slices.Contains(cfg.Workloads, w) }
	}
	wantAny := func(ws ...string) bool { return slices.ContainsFunc(ws, want) }
	rep := &Report{}
	// With both tiers, the standard workloads run the tiers interleaved,
	// run by run, so that both see the same moments of a shared machine
	// and their ratio holds even when the load drifts.
	var skip map[string]bool
	if len(cfg.Tiers) == 2 && wantAny("expense", "fanout", "market") {
		var names []string
		for _, w := range demo.Workloads() {
			if want(w.Name) {
				names = append(names, w.Name)
			}
		}
		rs, note, err := interleaved(ctx, cfg, names)
		if err != nil {
			return nil, err
		}
		rep.Rows = append(rep.Rows, rs...)
		rep.Notes = append(rep.Notes, note)
		skip = map[string]bool{"expense": true, "fanout": true, "market": true}
	}
	for _, tier := range cfg.Tiers {
		var rs []Row
		var err error
		if wantAny("expense", "expense-cold", "fanout", "market", "deadline-1s") && (skip == nil || wantAny("expense-cold", "deadline-1s")) {
			if tier == "inprocess" {
				rs, err = inprocess(ctx, cfg.Runs, skip)
			} else {
				var note string
				rs, note, err = processTier(ctx, cfg, skip)
				if note != "" && skip == nil { // else the interleaved run gave it
					rep.Notes = append(rep.Notes, note)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", tier, err)
			}
		}
		if wantAny("expense-wasm", "expense-wasm-c", "fanout-wasm") {
			ws, err := wasmTier(ctx, cfg, tier, want)
			if err != nil {
				return nil, fmt.Errorf("%s wasm: %w", tier, err)
			}
			rs = append(rs, ws...)
		}
		if tier == "process" && want("burst") {
			br, err := burst(ctx, cfg.Exe, max(cfg.Runs/10, 1), cfg.Reuse)
			if err != nil {
				return nil, fmt.Errorf("burst: %w", err)
			}
			rs = append(rs, br)
		}
		for _, r := range rs {
			if want(r.Workload) && !skip[r.Workload] {
				rep.Rows = append(rep.Rows, r)
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
		rs, cpu, err := firstRuns(ctx, cfg.Exe, cfg.Tiers, max(cfg.Runs/3, 3), fr.name, fr.src, fr.want)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fr.name, err)
		}
		rep.Rows = append(rep.Rows, rs...)
		if n := firstRunRatio(rs, cpu); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
	}
	if want("load") {
		rs, err := load(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
		rep.Rows = append(rep.Rows, rs...)
		if n := loadRatio(rs, cfg.LoadClients); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
	}
	if want("memory") {
		for _, tier := range cfg.Tiers {
			rs, err := memory(ctx, cfg.Exe, tier)
			if err != nil {
				return nil, fmt.Errorf("memory: %s: %w", tier, err)
			}
			rep.Rows = append(rep.Rows, rs...)
		}
	}
	rep.Notes = append(rep.Notes, wasmRatios(rep.Rows)...)
	if want("market") {
		if n := marketBytes(ctx); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
	}
	return rep, nil
}

// WriteJSON writes the rows as an indented JSON array.
func (r *Report) WriteJSON(w io.Writer) error {
	rows := r.Rows
	if rows == nil {
		rows = []Row{}
	}
	b, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// WriteTable writes the timed rows as a table, the memory rows as a second
// one, then the notes.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	num := func(v float64, prec int) string {
		if v == 0 {
			return ""
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	var mem []Row
	timed := 0
	for _, row := range r.Rows {
		if row.RSSMB > 0 {
			mem = append(mem, row)
			continue
		}
		if timed++; timed == 1 {
			fmt.Fprintln(tw, "workload\ttier\truns\tmedian ms\tmin ms\tmax ms\tp99 ms\tcalls/s\truns/s\tserver cpu ms/run\tworker cpu ms/run\t")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%s\t\n", row.Workload, row.Tier, row.Runs, row.MedianMS, row.MinMS, row.MaxMS,
			num(row.P99MS, 2), num(row.CallsPerS, 0), num(row.RunsPerS, 0), num(row.ServerCPUMS, 1), num(row.WorkerCPUMS, 1))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(mem) > 0 {
		if timed > 0 {
			fmt.Fprintln(w)
		}
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "memory (RSS)\ttier\tserver MB\tworkers MB\ttotal MB\tpeak MB\tback to idle in\t")
		for _, row := range mem {
			ws := make([]string, len(row.WorkerRSSMB))
			for i, v := range row.WorkerRSSMB {
				ws[i] = strconv.FormatFloat(v, 'f', 1, 64)
			}
			settle := ""
			switch {
			case row.SettleMS == nil:
			case *row.SettleMS >= 0:
				settle = fmt.Sprintf("%.1f s", *row.SettleMS/1000)
			default:
				settle = fmt.Sprintf("over %.0f s", memAfter.Seconds())
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t\n", row.Workload, row.Tier, num(row.ServerRSSMB, 1), strings.Join(ws, ", "),
				row.RSSMB, num(row.PeakRSSMB, 1), settle)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, n := range r.Notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// summarize makes a row of the durations ds (sorted in place); calls > 0
// gives the calls per second of a median run.
func summarize(workload, tier string, ds []time.Duration, calls int) Row {
	slices.Sort(ds)
	med := ds[len(ds)/2]
	if len(ds)%2 == 0 {
		med = (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
	}
	r := Row{Workload: workload, Tier: tier, Runs: len(ds), MedianMS: ms(med), MinMS: ms(ds[0]), MaxMS: ms(ds[len(ds)-1])}
	if calls > 0 && med > 0 {
		r.CallsPerS = float64(calls) / med.Seconds()
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func workloadNamed(name string) demo.Workload {
	for _, w := range demo.Workloads() {
		if w.Name == name {
			return w
		}
	}
	panic("no workload " + name)
}

// thousands writes n with a comma every three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
