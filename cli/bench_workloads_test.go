package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/bench"
)

// TestBenchWorkloads: --workloads measures only the workloads it names (the
// first-run rows with both tiers, interleaved), and an unknown name is a
// usage error that lists the known ones.
func TestBenchWorkloads(t *testing.T) {
	t.Parallel()
	heavy(t)
	stdout, stderr, code := sandcall(t, "", "bench", "--json", "--workloads", "first-run-return1", "--runs", "3")
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s", code, stderr)
	}
	var rows []bench.Row
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, stdout)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Workload+"/"+r.Tier)
		if r.Runs != 3 || r.MedianMS <= 0 {
			t.Errorf("row %+v: want 3 timed runs and a median", r)
		}
	}
	if strings.Join(got, " ") != "first-run-return1/inprocess first-run-return1/process" {
		t.Errorf("rows %v, want first-run-return1 in each tier only", got)
	}
	_, stderr, code = sandcall(t, "", "bench", "--workloads", "expense,nope")
	if code != exitUsage || !strings.Contains(stderr, `unknown workload "nope"`) || !strings.Contains(stderr, "first-run-return1") {
		t.Errorf("unknown workload: exit %d, stderr %q", code, stderr)
	}
}
