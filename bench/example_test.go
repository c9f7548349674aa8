package bench_test

import (
	"context"
	"fmt"

	"github.com/sandcall/sandcall/bench"
)

// Two standard workloads in the in-process tier, three timed runs each;
// every run is checked against the workload's exact result.
func Example() {
	rep, err := bench.Run(context.Background(), bench.Config{
		Tiers:     []string{"inprocess"},
		Runs:      3,
		Workloads: []string{"expense", "fanout"},
	})
	if err != nil {
		panic(err)
	}
	for _, r := range rep.Rows {
		fmt.Println(r.Workload, r.Tier, r.Runs, r.MedianMS > 0, r.CallsPerS > 0)
	}
	// Output:
	// expense inprocess 3 true false
	// fanout inprocess 3 true true
}
