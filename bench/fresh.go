package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// firstRuns times a fresh `sandcall run` process of src, from start to
// exit, whose result must be want: what a one-shot CLI user waits for. It
// makes n timed runs in each tier, the tiers taking turns, and returns one
// row per tier named name, and the median CPU time of a run in each tier
// (the command's and the workers' it reaped, user and system).
func firstRuns(ctx context.Context, exe string, tiers []string, n int, name, src, want string) ([]Row, []time.Duration, error) {
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
			cmd := exec.CommandContext(ctx, exe, "run", "--demo", "--json", "--isolation", tier, "--workers", "1", prog)
			cmd.Dir = dir // no sandcall.yaml of the working directory
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
	rows := make([]Row, len(tiers))
	cpu := make([]time.Duration, len(tiers))
	for ti, tier := range tiers {
		rows[ti] = summarize(name, tier, ds[ti], 0)
		slices.Sort(cpus[ti])
		cpu[ti] = cpus[ti][len(cpus[ti])/2]
	}
	return rows, cpu, nil
}

// firstRunRatio compares the process tier's fresh run with the in-process
// one's, measured in the same turns, in wall time and in CPU time (cpu[i]
// is rows[i]'s median).
func firstRunRatio(rows []Row, cpu []time.Duration) string {
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
		rows[0].Workload, pr/in, ms(prCPU), ms(inCPU), float64(prCPU)/float64(inCPU))
}
