package demo_test

import (
	"context"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/wasm"
	"github.com/sandcall/sandcall/tools"
)

// TestFanoutModule runs FanoutModule through the broker on the WebAssembly
// interpreter: the same result and number of calls as FanoutProgram.
func TestFanoutModule(t *testing.T) {
	cat, err := tools.NewCatalog(demo.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	e, err := wasm.New(wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: e, Languages: []sandbox.Language{sandbox.WASM}})
	if err != nil {
		t.Fatal(err)
	}
	w := workload(t, "fanout")
	res := r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Language: sandbox.WASM, Module: demo.FanoutModule}})
	if !res.OK || string(res.Result) != w.Want || res.Calls.Total != w.Calls || res.Calls.OK != w.Calls {
		t.Fatalf("ok %v, result %s, calls %+v, error %v; want %s after %d ok calls", res.OK, res.Result, res.Calls, res.Error, w.Want, w.Calls)
	}
}
