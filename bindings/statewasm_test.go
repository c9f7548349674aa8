package bindings

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/wasm"
)

// TestStateWasm: a WebAssembly guest keeps state through the ABI's call
// function by the $state.* names (the parity module that calls the tool
// its input names), and a JavaScript run of the same principal reads it.
func TestStateWasm(t *testing.T) {
	mod, err := os.ReadFile("../sandbox/parity/testdata/wasm/call_input.wasm")
	if err != nil {
		t.Fatal(err)
	}
	w, err := wasm.New(wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	b := newBroker(t, BrokerConfig{})
	langs := sandbox.Languages{sandbox.WASM: w, sandbox.JavaScript: js.New(js.Config{})}
	r, err := NewRunner(RunnerConfig{Broker: b, Executor: langs, Languages: []sandbox.Language{sandbox.WASM, sandbox.JavaScript}})
	if err != nil {
		t.Fatal(err)
	}
	call := func(name, args string) string {
		in, _ := json.Marshal([]json.RawMessage{json.RawMessage(`"` + name + `"`), json.RawMessage(args)})
		res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Language: sandbox.WASM, Module: mod, Input: in}})
		if !res.OK {
			t.Fatalf("%s: %+v", name, res.Error)
		}
		return string(res.Result)
	}
	if got := call(sandbox.StateSet, `{"key":"k","value":{"from":"wasm"},"ttl_s":60}`); got != "null" {
		t.Fatalf("set: %s", got)
	}
	if got := call(sandbox.StateGet, `{"key":"k"}`); got != `{"from":"wasm"}` {
		t.Fatalf("get: %s", got)
	}
	if got := call(sandbox.StateKeys, `{}`); got != `["k"]` {
		t.Fatalf("keys: %s", got)
	}
	if got := call(sandbox.StateGet, `{"key":""}`); !json.Valid([]byte(got)) || got == "null" {
		t.Fatalf("a bad key: %s", got)
	}
	res := runJS(t, r, LocalPrincipal, `return await state.get("k")`)
	if string(res.Result) != `{"from":"wasm"}` {
		t.Fatalf("JavaScript reads %s %+v", res.Result, res.Error)
	}
	if got := call(sandbox.StateDelete, `{"key":"k"}`); got != "true" {
		t.Fatalf("delete: %s", got)
	}
}
