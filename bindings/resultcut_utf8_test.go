package bindings

import (
	"context"
	"os"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/wasm"
)

// TestResultMustBeUTF8: a WebAssembly guest that sets a result with raw
// non-UTF-8 bytes inside a string (json.Valid accepts them) fails with
// E_RESULT_INVALID instead of handing clients text they cannot decode
// (echo_input copies its input into the result).
func TestResultMustBeUTF8(t *testing.T) {
	mod, err := os.ReadFile("../sandbox/wasm/testdata/echo_input.wasm")
	if err != nil {
		t.Fatal(err)
	}
	e, err := wasm.New(wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(RunnerConfig{Broker: newBroker(t, BrokerConfig{}), Executor: e, Languages: []sandbox.Language{sandbox.WASM}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(input string) *sandbox.Result {
		return r.Run(context.Background(), RunRequest{Program: sandbox.Program{Language: sandbox.WASM, Module: mod, Input: []byte(input)}})
	}
	if res := run("\"\xff\xfe\""); res.OK || res.Error == nil || res.Error.Code != sandbox.EResultInvalid || res.Error.Hint == "" || string(res.Result) != "null" {
		t.Errorf("non-UTF-8 result: ok %v, result %q, error %+v", res.OK, res.Result, res.Error)
	}
	if res := run(`"é日"`); !res.OK || string(res.Result) != `"é日"` {
		t.Errorf("UTF-8 result: ok %v, result %q, error %+v", res.OK, res.Result, res.Error)
	}
}
