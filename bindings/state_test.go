package bindings

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools"
)

// stateRunner runs JavaScript in process over b.
func stateRunner(t *testing.T, b *Broker) *Runner {
	t.Helper()
	r, err := NewRunner(RunnerConfig{Broker: b, Executor: js.New(js.Config{}), Limits: sandbox.Limits{Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func runJS(t *testing.T, r *Runner, p Principal, src string) *sandbox.Result {
	t.Helper()
	return r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: src}, Principal: p})
}

// TestStateAcrossRuns: a value set in one run is read in the next by the
// same principal, and not by another; keys and delete see the same state.
func TestStateAcrossRuns(t *testing.T) {
	b := newBroker(t, BrokerConfig{}, echo("a"))
	r := stateRunner(t, b)
	alice, bob := Principal{ID: "alice"}, Principal{ID: "bob"}
	if res := runJS(t, r, alice, `await state.set("count", {n: 1}); await state.set("other", "x"); return null`); !res.OK {
		t.Fatalf("set: %+v", res.Error)
	}
	res := runJS(t, r, alice, `const c = await state.get("count"); return [c, await state.keys(), await state.get("nope")]`)
	if !res.OK || string(res.Result) != `[{"n":1},["count","other"],null]` {
		t.Fatalf("alice's next run: %s %+v", res.Result, res.Error)
	}
	res = runJS(t, r, bob, `return [await state.get("count"), await state.keys()]`)
	if !res.OK || string(res.Result) != `[null,[]]` {
		t.Fatalf("bob reads alice's state: %s %+v", res.Result, res.Error)
	}
	res = runJS(t, r, alice, `return [await state.delete("count"), await state.delete("count"), await state.keys()]`)
	if string(res.Result) != `[true,false,["other"]]` {
		t.Fatalf("delete: %s %+v", res.Result, res.Error)
	}
	// State calls count as calls of the run, by no tool.
	if res.Calls.Total != 3 || len(res.Calls.ByTool) != 0 {
		t.Fatalf("calls %+v", res.Calls)
	}
}

// TestStateErrors: bad keys, values and ttl_s are E_TOOL_ARGS; a full state
// is E_TOOL_FAILED naming the bound; a direct caller has no state.
func TestStateErrors(t *testing.T) {
	b := newBroker(t, BrokerConfig{State: StateConfig{MaxKeys: 2, MaxBytes: 200, MaxTTL: time.Hour}})
	r := stateRunner(t, b)
	cases := []struct{ src, want string }{
		{`await state.get("")`, "E_TOOL_ARGS /key"},
		{`await state.get("x".repeat(300))`, "E_TOOL_ARGS /key"},
		{`await state.get(5)`, "E_TOOL_ARGS "},
		{`await state.set("k")`, "E_TOOL_ARGS /value"},
		{`await state.set("k", 1, {ttl_s: 7200})`, "E_TOOL_ARGS /ttl_s"},
		{`await state.set("k", 1, {ttl_s: 0.5})`, "E_TOOL_ARGS /ttl_s"},
		{`await state.set("k", "x".repeat(300))`, "E_TOOL_FAILED "},
		{`await state.set("a", 1); await state.set("b", 1); await state.set("c", 1)`, "E_TOOL_FAILED "},
	}
	for _, c := range cases {
		res := runJS(t, r, Principal{ID: "p-" + c.src}, c.src)
		if res.Error == nil {
			t.Errorf("%s: no error", c.src)
			continue
		}
		if got := string(res.Error.Code) + " " + res.Error.Path; got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.src, got, res.Error.Message, c.want)
		}
		if res.Error.Hint == "" {
			t.Errorf("%s: no hint", c.src)
		}
	}
	if _, err := b.CallDirect(context.Background(), LocalPrincipal, sandbox.StateGet, json.RawMessage(`{"key":"k"}`)); code(err) != sandbox.EToolUnknown {
		t.Fatalf("a direct state call: %v", err)
	}
}

// TestStateCarriesLabel: a value written after reading untrusted data
// keeps that label, and a later run that reads it is denied the
// destructive call the flow rule guards — as is one that only lists its
// key. A value written by a clean run reads clean.
func TestStateCarriesLabel(t *testing.T) {
	liar := labelled("liar", nil, tools.Effects{})
	b := flowBroker(t, nil, liar, mk("drop", destructive), echo("mail"))
	r := stateRunner(t, b)
	p := Principal{ID: "alice"}
	res := runJS(t, r, p, `await state.set("clean", 1);
const m = await tools.liar({});
await state.set("note", m.text);
return 1`)
	if !res.OK {
		t.Fatal(res.Error)
	}
	res = runJS(t, r, p, `await state.get("clean"); await tools.drop({}); return "ok"`)
	if !res.OK {
		t.Fatalf("a clean value taints the run: %+v", res.Error)
	}
	res = runJS(t, r, p, `const n = await state.get("note"); await tools.drop({why: n}); return "dropped"`)
	if res.OK || res.Error.Code != sandbox.EToolDenied || res.Error.Rule != "no-untrusted-destruction" ||
		!strings.Contains(res.Error.Message, "state:note") {
		t.Fatalf("the untrusted value did not taint the reading run: %+v", res.Error)
	}
	res = runJS(t, r, p, `await state.keys("no"); await tools.drop({}); return "dropped"`)
	if res.OK || res.Error.Rule != "no-untrusted-destruction" {
		t.Fatalf("listing the untrusted key did not taint the run: %+v", res.Error)
	}
	if sec := res.Meta["security_label"].(map[string]any); sec["integrity"] != "untrusted" {
		t.Fatalf("run label %v", sec)
	}
	res = runJS(t, r, p, `await tools.mail({to: ["bob"]}); return 1`)
	if !res.OK {
		t.Fatalf("a run that reads no state is clean: %+v", res.Error)
	}
	res = runJS(t, r, p, `await state.get("note"); await tools.mail({to: ["bob"]}); return 1`)
	if res.OK {
		t.Fatal("mail to a non-reader after reading alice-only state was allowed")
	}
}

// TestStateSharedStore: brokers sharing a store.Space (replicas sharing
// Redis) share the state.
func TestStateSharedStore(t *testing.T) {
	shared := store.NewMemory()
	r1 := stateRunner(t, newBroker(t, BrokerConfig{Shared: shared}))
	r2 := stateRunner(t, newBroker(t, BrokerConfig{Shared: shared}))
	runJS(t, r1, LocalPrincipal, `await state.set("k", "from r1"); return 1`)
	if res := runJS(t, r2, LocalPrincipal, `return await state.get("k")`); string(res.Result) != `"from r1"` {
		t.Fatalf("r2 reads %s %+v", res.Result, res.Error)
	}
}

// TestStateValueLabelJSON: the label is kept as stated, public and
// nobody apart.
func TestStateValueLabelJSON(t *testing.T) {
	for _, l := range []policy.Label{{}, {Untrusted: true}, {Readers: []string{}}, {Readers: []string{"a", "b"}}} {
		v := stateValue{Value: json.RawMessage("1"), Untrusted: l.Untrusted, Readers: l.Readers, Public: l.Public()}
		b, _ := json.Marshal(v)
		var back stateValue
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		got := back.label()
		if got.Untrusted != l.Untrusted || got.Public() != l.Public() || !bytes.Equal([]byte(strings.Join(got.Readers, ",")), []byte(strings.Join(l.Readers, ","))) {
			t.Errorf("%v came back %v (%s)", l, got, b)
		}
	}
}
