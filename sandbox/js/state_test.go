package js

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// TestStateGlobal: state.get/set/delete/keys send the sandbox.State* calls
// with their documented arguments and resolve with the host's answers.
func TestStateGlobal(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	record := func(answer string) sandboxtest.Func {
		return func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
			mu.Lock()
			sent = append(sent, string(args))
			mu.Unlock()
			return json.RawMessage(answer), nil
		}
	}
	host := sandboxtest.New(map[string]sandboxtest.Func{
		sandbox.StateGet:    record(`{"n":1}`),
		sandbox.StateSet:    record(`null`),
		sandbox.StateDelete: record(`true`),
		sandbox.StateKeys:   record(`["a","b"]`),
	})
	src := `await state.set("k", {n: 1}, {ttl_s: 60});
await state.set("k2", [1, "x"]);
const v = await state.get("k");
const d = await state.delete("k");
const ks = await state.keys("a");
const all = await state.keys();
let bad = null;
try { await state.set("k", 1, {ttl: 5}); } catch (e) { bad = e.code; }
return {v, d, ks, all, bad};`
	out := New(Config{}).Execute(context.Background(),
		&sandbox.Job{Program: sandbox.Program{Source: src}, Limits: sandbox.DefaultLimits()}, host)
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	if got := string(out.Value); got != `{"v":{"n":1},"d":true,"ks":["a","b"],"all":["a","b"],"bad":"E_TOOL_ARGS"}` {
		t.Fatalf("result %s", got)
	}
	want := []string{`{"key":"k","value":{"n":1},"ttl_s":60}`, `{"key":"k2","value":[1,"x"]}`,
		`{"key":"k"}`, `{"key":"k"}`, `{"prefix":"a"}`, `{}`}
	if len(sent) != len(want) {
		t.Fatalf("sent %q", sent)
	}
	for i := range want {
		if sent[i] != want[i] {
			t.Errorf("call %d sent %s, want %s", i, sent[i], want[i])
		}
	}
}
