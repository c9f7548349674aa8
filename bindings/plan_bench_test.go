package bindings

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/plan"
	"github.com/sandcall/sandcall/tools"
)

// BenchmarkPlanShare: what reading the plan adds to a run of a program
// the host has not seen (neither the plan nor the engine's compile is
// cached: each iteration's text is new). "plan" is the plan alone, "run"
// the whole in-process run (which includes it): compare them within one
// run of the benchmark.
func BenchmarkPlanShare(b *testing.B) {
	body := strings.Repeat("{ const r = await tools.echo({n: 1}); if (r.n > 0) console.log(r.n); }\n", 20)
	src := func(i int) string { return "// " + strconv.Itoa(i) + "\n" + body + "return 1;" }
	b.Run("plan", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := plan.Of(sandbox.Program{Source: src(i)}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("run", func(b *testing.B) {
		br, err := NewBroker(BrokerConfig{Catalog: mustCatalog(b, echo("echo"))})
		if err != nil {
			b.Fatal(err)
		}
		r, _ := NewRunner(RunnerConfig{Broker: br, Executor: js.New(js.Config{}), Limits: sandbox.Limits{Timeout: 10 * time.Second}})
		i := 1 << 20
		for b.Loop() {
			i++
			if res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: src(i)}}); !res.OK {
				b.Fatal(res.Error)
			}
		}
	})
}

func mustCatalog(tb testing.TB, ts ...*tools.Tool) *tools.Catalog {
	tb.Helper()
	c, err := tools.NewCatalog(ts...)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
