package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// loadProgram is the load workload's small run: one tool call.
const (
	loadProgram = "return await tools.ping({ n: 41 })"
	loadWant    = "42"
)

// load measures sustained load in each tier: cfg.LoadClients clients, each
// with its own MCP session to one `sandcall serve --http`, send small runs
// (loadProgram) back to back for cfg.LoadDuration after two untimed runs
// each. A row gives the median, 99th percentile and extremes of a run's
// latency as a client sees it, the runs completed per second (all clients
// together), and the server's and workers' CPU per run. Every run must
// succeed with the exact result.
func load(ctx context.Context, cfg Config) ([]Row, error) {
	var rows []Row
	for _, tier := range cfg.Tiers {
		row, err := loadTier(ctx, cfg, tier)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tier, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func loadTier(ctx context.Context, cfg Config, tier string) (Row, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := startHTTP(ctx, cfg.Exe, noRateLimit, "--isolation", tier, "--worker-reuse", strconv.Itoa(cfg.Reuse))
	if err != nil {
		return Row{}, err
	}
	defer s.close()
	sessions := make([]*mcp.ClientSession, cfg.LoadClients)
	for i := range sessions {
		cs, err := s.client(ctx)
		if err != nil {
			return Row{}, err
		}
		defer cs.Close()
		sessions[i] = cs
		for range 2 { // untimed: the session and the server warm up
			if err := runCode(ctx, cs, loadProgram, nil, loadWant); err != nil {
				return Row{}, err
			}
		}
	}
	pid := s.pid()
	meter := newCPUMeter(pid, func() []int { return childPIDs(pid) })
	lat := make([][]time.Duration, len(sessions))
	errs := make([]error, len(sessions))
	start := time.Now()
	end := start.Add(cfg.LoadDuration)
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				t0 := time.Now()
				if err := runCode(ctx, cs, loadProgram, nil, loadWant); err != nil {
					errs[i] = err
					cancel() // the others stop too
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return Row{}, err
		}
	}
	all := slices.Concat(lat...)
	row := summarize("load", tier, all, 0)
	row.P99MS = ms(all[min(len(all)-1, len(all)*99/100)]) // all is sorted
	row.RunsPerS = float64(len(all)) / elapsed.Seconds()
	row.ServerCPUMS, row.WorkerCPUMS = meter.perJob(len(all))
	return row, nil
}

// loadRatio compares the tiers' load rows: the process tier's throughput
// and p99 as multiples of the in-process tier's.
func loadRatio(rows []Row, clients int) string {
	var in, pr *Row
	for i := range rows {
		switch rows[i].Tier {
		case "inprocess":
			in = &rows[i]
		case "process":
			pr = &rows[i]
		}
	}
	if in == nil || pr == nil || in.RunsPerS == 0 || in.P99MS == 0 {
		return ""
	}
	return fmt.Sprintf("load: process tier %.2fx the in-process runs/s, p99 %.2fx (%d clients)",
		pr.RunsPerS/in.RunsPerS, pr.P99MS/in.P99MS, clients)
}
