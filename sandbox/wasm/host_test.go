package wasm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// newHost returns the scriptable fake broker of sandbox/sandboxtest with
// its standard tools (ping, echo, nap, slow, fail, deny).
func newHost() *sandboxtest.Host { return sandboxtest.New(nil) }

// fixture reads testdata/name.wasm.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newEngine returns an engine closed at the end of the test.
func newEngine(t testing.TB, cfg Config) *Engine {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func job(module []byte, input string, l sandbox.Limits) *sandbox.Job {
	j := &sandbox.Job{RunID: "test", Program: sandbox.Program{Language: sandbox.WASM, Module: module}, Limits: l.Resolve()}
	if input != "" {
		j.Program.Input = json.RawMessage(input)
	}
	return j
}
