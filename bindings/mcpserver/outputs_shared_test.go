package mcpserver_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/store/storetest"
	"github.com/sandcall/sandcall/tools"
)

// replica is one server with its own broker, runner and engine, sharing st
// with the other replicas, as two `sandcall serve` processes would.
func replica(t *testing.T, st store.Store, auth bindings.Authorizer) *harness {
	t.Helper()
	cat, err := tools.NewCatalog(demo.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	audit := newAuditLog()
	broker, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat, Authorizer: auth, Audit: slog.New(audit), Shared: st})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{}),
		Modules: bindings.NewSharedModuleStore(0, st)})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, srv, cat, audit, options{})
}

// TestSharedOutputsAcrossReplicas: with a Redis store (a real
// redis-server), a result cut on one replica is paged through another;
// with Redis down, read_output says E_INTERNAL with a hint and the server
// keeps serving; when Redis is back, it works again.
func TestSharedOutputsAcrossReplicas(t *testing.T) {
	r := storetest.StartRedis(t)
	st, err := store.Open(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, b := replica(t, st, nil), replica(t, st, nil)

	want := `"` + strings.Repeat("x", 400<<10) + `"`
	res := a.call(t, "run_code", map[string]any{"code": `return "x".repeat(400 * 1024)`})
	out := decodeStructured[longResult](t, res)
	if !out.Truncated || out.OutputRef == "" {
		t.Fatalf("want a cut result with a ref, got truncated %v ref %q", out.Truncated, out.OutputRef)
	}
	var first string
	_ = json.Unmarshal(out.Result, &first)
	got := first
	for off := out.OutputNextOffset; ; {
		p := readPage(t, b, out.OutputRef, off, 128<<10) // through the other replica
		got += p.Data
		if p.EOF {
			break
		}
		off = p.NextOffset
	}
	if got != want {
		t.Fatalf("paged output: %d bytes, want %d", len(got), len(want))
	}

	r.Stop()
	e := wantCode(t, b.call(t, "read_output", map[string]any{"ref": out.OutputRef}), sandbox.EInternal)
	if !strings.Contains(e.Hint, "store") || strings.Contains(e.Message, "127.0.0.1") {
		t.Errorf("Redis down: %+v", e)
	}
	// Runs that need no shared state still work.
	if res := a.call(t, "run_code", map[string]any{"code": `return 1`}); res.IsError {
		t.Fatalf("small run with Redis down: %s", textJSON(t, res))
	}
	r.Start()
	res = a.call(t, "run_code", map[string]any{"code": `return "y".repeat(400 * 1024)`})
	out = decodeStructured[longResult](t, res)
	if out.OutputRef == "" {
		t.Fatal("no ref after Redis came back")
	}
	readPage(t, b, out.OutputRef, out.OutputNextOffset, 1024)
}

const ratePing = `version: 1
rules:
  - name: ping-rate
    tools: [ping]
    allowed_callers: [direct, code]
    rate: {calls: 3, per: 1h}
`

// TestSharedRateLimit: a rate of 3 calls holds across two replicas sharing
// a real redis-server; with Redis down the call fails E_INTERNAL, not
// E_TOOL_DENIED.
func TestSharedRateLimit(t *testing.T) {
	r := storetest.StartRedis(t)
	st, err := store.Open(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reps := []*harness{replica(t, st, mustPolicy(t, ratePing)), replica(t, st, mustPolicy(t, ratePing))}
	for i := range 3 {
		if res := reps[i%2].call(t, "ping", map[string]any{"n": i}); res.IsError {
			t.Fatalf("call %d: %s", i, textJSON(t, res))
		}
	}
	for i := range 2 {
		e := wantCode(t, reps[i%2].call(t, "ping", map[string]any{"n": 9}), sandbox.EToolDenied)
		if e.Rule != "ping-rate" {
			t.Errorf("over the limit: %+v", e)
		}
	}
	r.Stop()
	e := wantCode(t, reps[0].call(t, "ping", map[string]any{"n": 1}), sandbox.EInternal)
	if !strings.Contains(e.Hint, "Retry") {
		t.Errorf("Redis down: %+v", e)
	}
}
