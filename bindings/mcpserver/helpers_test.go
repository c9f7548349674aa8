package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// newPipeline builds the call pipeline a test server runs on: a catalog
// of ts, a broker configured by bc over it, and a runner configured by rc
// over the broker, with the JavaScript engine unless rc names an
// executor.
func newPipeline(t *testing.T, bc bindings.BrokerConfig, rc bindings.RunnerConfig, ts ...*tools.Tool) *bindings.Runner {
	t.Helper()
	cat, err := tools.NewCatalog(ts...)
	if err != nil {
		t.Fatal(err)
	}
	bc.Catalog = cat
	broker, err := bindings.NewBroker(bc)
	if err != nil {
		t.Fatal(err)
	}
	rc.Broker = broker
	if rc.Executor == nil {
		rc.Executor = js.New(js.Config{})
	}
	runner, err := bindings.NewRunner(rc)
	if err != nil {
		t.Fatal(err)
	}
	return runner
}

func newRunner(t *testing.T, ts ...*tools.Tool) *bindings.Runner {
	t.Helper()
	return newPipeline(t, bindings.BrokerConfig{}, bindings.RunnerConfig{}, ts...)
}

// panicExecutor is an engine with a bug: it panics. It is fault injection for
// the recovery path, not a stand-in for the real engine.
type panicExecutor struct{ sandbox.Executor }

func (p panicExecutor) Execute(ctx context.Context, job *sandbox.Job, h sandbox.Host) *sandbox.Outcome {
	if strings.Contains(job.Program.Source, "PANIC_IN_ENGINE") {
		panic("engine bug")
	}
	return p.Executor.Execute(ctx, job, h)
}
