package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/wasm"
)

// wasmTier measures the WebAssembly workloads in a tier: expense-wasm (the
// Go guest, expense.ModuleGo), expense-wasm-c (the C guest,
// expense.ModuleC) and fanout-wasm (demo.FanoutModule, 1,000 calls through
// call_async and wait). In-process, a module is compiled once by wazero's
// interpreter and cached, so the timed runs are warm; in the process tier
// a worker compiles the module with wazero's compiler and keeps it for the
// runs it serves (with reuse 1, every run is a new worker, so every run
// includes compilation). The Go guest gets at most 10 timed runs.
func wasmTier(ctx context.Context, cfg Config, tier string, want func(string) bool) ([]Row, error) {
	b, err := broker()
	if err != nil {
		return nil, err
	}
	// The longest deadline: a run of the Go guest compiling in a new worker
	// takes seconds on a loaded machine; bench measures, and every run is
	// checked, so a deadline only guards against a hang.
	limits := sandbox.Limits{Timeout: sandbox.MaxTimeout}
	langs := []sandbox.Language{sandbox.WASM}
	var (
		r      *bindings.Runner
		before func()
	)
	switch tier {
	case "inprocess":
		w, err := wasm.New(wasm.Config{})
		if err != nil {
			return nil, err
		}
		defer w.Close(context.Background())
		if r, err = bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: w, Tier: tier, Languages: langs, Limits: limits}); err != nil {
			return nil, err
		}
	case "process":
		bp, err := newPool(cfg, limits, langs...)
		if err != nil {
			return nil, err
		}
		defer bp.close()
		r, before = bp.r, bp.waitWarm
	}
	// A new worker per run compiles the module: nothing to warm.
	warm := 1
	if tier == "process" && cfg.Reuse <= 1 {
		warm = 0
	}
	var rows []Row
	w := workloadNamed("expense")
	for _, m := range []struct {
		name   string
		module []byte
		runs   int
	}{
		{"expense-wasm", expense.ModuleGo(), min(cfg.Runs, 10)},
		{"expense-wasm-c", expense.ModuleC, cfg.Runs},
	} {
		if !want(m.name) {
			continue
		}
		ds, err := measureProgram(ctx, r, w, sandbox.Program{Language: sandbox.WASM, Module: m.module}, m.runs, warm, before)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
		rows = append(rows, summarize(m.name, tier, ds, 0))
	}
	if want("fanout-wasm") {
		f := workloadNamed("fanout")
		ds, err := measureProgram(ctx, r, f, sandbox.Program{Language: sandbox.WASM, Module: demo.FanoutModule}, cfg.Runs, 2, before)
		if err != nil {
			return nil, fmt.Errorf("fanout-wasm: %w", err)
		}
		rows = append(rows, summarize("fanout-wasm", tier, ds, f.Calls))
	}
	return rows, nil
}

// wasmRatios compares each WebAssembly workload's median with the
// JavaScript workload's in the same tier.
func wasmRatios(rows []Row) []string {
	median := map[string]float64{}
	for _, r := range rows {
		median[r.Workload+"/"+r.Tier] = r.MedianMS
	}
	var notes []string
	for _, r := range rows {
		base, _, ok := strings.Cut(r.Workload, "-wasm")
		if !ok || median[base+"/"+r.Tier] <= 0 {
			continue
		}
		notes = append(notes, fmt.Sprintf("%s/%s: %.2fx the median of %s (JavaScript)", r.Workload, r.Tier, r.MedianMS/median[base+"/"+r.Tier], base))
	}
	return notes
}
