package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/internal/testenv"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// bin is the real sandcall binary, built once by TestMain; `sandcall serve
// --demo` is the upstream server of the end-to-end tests.
var bin string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	var err error
	// Not named sandcall: a program of that name is sandcall itself (IsSelf)
	// and never started as an upstream.
	if bin, err = testenv.DemoServer(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// demoSet attaches `sandcall serve --demo` as the upstream server "demo"
// through a project config file, and returns the catalog and the set.
func demoSet(t *testing.T, extra ...*tools.Tool) (*tools.Catalog, *Set) {
	t.Helper()
	root := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": bin, "args": []string{"serve", "--demo"}, "timeout": "30s"},
	}})
	writeFile(t, filepath.Join(root, ".mcp.json"), string(cfg))
	cat, err := tools.NewCatalog(extra...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	set := Attach(ctx, cat, Options{Config: LoadConfig{Root: root}})
	t.Cleanup(set.Close)
	if len(set.Warnings()) > 0 {
		t.Fatalf("warnings: %v", set.Warnings())
	}
	return cat, set
}

func runJS(t *testing.T, cat *tools.Catalog, code string) *sandbox.Result {
	t.Helper()
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return r.Run(ctx, bindings.RunRequest{Program: sandbox.Program{Source: code}})
}

func TestDemoUpstream(t *testing.T) {
	cat, set := demoSet(t)
	got := strings.Join(set.Tools()["demo"], ",")
	for _, want := range []string{"demo_ping", "demo_get_expenses", "demo_get_team_members", "demo_get_budget_by_level", "demo_run_code"} {
		if _, ok := cat.Lookup(want); !ok {
			t.Errorf("%s missing; added %s", want, got)
		}
	}
	ping, _ := cat.Lookup("demo_ping")
	if ping.Source != "demo" || ping.SourceName != "ping" || !ping.Effects.ReadOnly || !ping.Effects.Idempotent || !strings.HasPrefix(ping.Description, "Does the tool path work") {
		t.Errorf("demo_ping = %+v", ping)
	}
	if ping.InputSchema == nil || strings.Join(ping.InputSchema.PropertyOrder, ",") != "n" {
		t.Errorf("demo_ping schema = %+v", ping.InputSchema)
	}

	// A fan-out in Promise.all: sum of (i + 1) for i in 0..49 = 1275.
	res := runJS(t, cat, `
		const rs = await Promise.all(Array.from({length: 50}, (_, i) => tools.demo_ping({n: i})));
		return rs.reduce((a, b) => a + b, 0);`)
	if !res.OK || string(res.Result) != "1275" || res.Calls.Total != 50 {
		t.Fatalf("fan-out = ok %v result %s calls %+v error %+v", res.OK, res.Result, res.Calls, res.Error)
	}

	// Structured results come back as values.
	res = runJS(t, cat, `const e = await tools.demo_get_expenses({member_id: "ENG-001", quarter: "Q3"}); return Array.isArray(e) || typeof e === "object";`)
	if !res.OK || string(res.Result) != "true" {
		t.Fatalf("get_expenses = %s %+v", res.Result, res.Error)
	}

	// A bad enum is caught by the upstream schema, compiled here: E_TOOL_ARGS
	// before any call leaves sandcall.
	res = runJS(t, cat, `try { await tools.demo_get_expenses({member_id: "ENG-001", quarter: "Q9"}) } catch (e) { return e.code }`)
	if !res.OK || string(res.Result) != `"E_TOOL_ARGS"` {
		t.Fatalf("bad enum = %s %+v", res.Result, res.Error)
	}
	// Past local validation (the handler called directly), the upstream's
	// own isError result becomes a tool error with its message.
	ge, _ := cat.Lookup("demo_get_expenses")
	_, err := ge.Handler(context.Background(), json.RawMessage(`{"member_id":"ENG-001","quarter":"Q9"}`))
	se := sandbox.AsError(err, "")
	if se.Code != sandbox.EToolFailed || se.Retryable || !strings.Contains(se.Message, `upstream server "demo"`) || !strings.Contains(se.Message, "Q9") {
		t.Fatalf("upstream error = %+v", se)
	}
}

func TestUpstreamDiesMidRun(t *testing.T) {
	var set *Set
	kill := tools.MustFunc(tools.Tool{Name: "kill_upstream", Description: "Kills the demo upstream."},
		func(ctx context.Context, _ struct{}) (bool, error) {
			return true, syscall.Kill(set.pid("demo"), syscall.SIGKILL)
		})
	cat, s := demoSet(t, kill)
	set = s
	res := runJS(t, cat, `
		const a = await tools.demo_ping({n: 1});
		await tools.kill_upstream({});
		let code = "none";
		try { await tools.demo_ping({n: 2}) } catch (e) { code = e.code }
		return {a, code, after: "continued"};`)
	if !res.OK || string(res.Result) != `{"a":2,"code":"E_TOOL_FAILED","after":"continued"}` {
		t.Fatalf("run = ok %v %s %+v", res.OK, res.Result, res.Error)
	}
}

func TestPinChangedDefinition(t *testing.T) {
	cat, set := demoSet(t)
	// Pretend demo_ping was first seen with another definition.
	set.pins.mu.Lock()
	set.pins.hashes[PinKey("demo", "ping")] = "old"
	set.pins.mu.Unlock()
	set.Refresh(context.Background())
	if _, ok := cat.Lookup("demo_ping"); ok {
		t.Fatal("changed demo_ping still in the catalog")
	}
	if _, ok := cat.Lookup("demo_get_expenses"); !ok {
		t.Fatal("unchanged tool removed")
	}
	if strings.Join(set.Pins().Pending(), ",") != "demo/ping" || !strings.Contains(strings.Join(set.Warnings(), "\n"), "demo_ping") {
		t.Fatalf("pending %v, warnings %v", set.Pins().Pending(), set.Warnings())
	}
	if ok, err := set.Pins().Approve(PinKey("demo", "ping")); !ok || err != nil {
		t.Fatalf("Approve = %v, %v", ok, err)
	}
	set.Refresh(context.Background())
	if _, ok := cat.Lookup("demo_ping"); !ok {
		t.Fatal("approved demo_ping not back")
	}
}

// TestUpstreamReconnect kills the upstream process: calls during the outage
// fail with a retryable E_TOOL_FAILED, a fresh process is started, and
// demo_ping works again.
func TestUpstreamReconnect(t *testing.T) {
	cat, set := demoSet(t)
	old := set.pid("demo")
	if old == 0 {
		t.Fatal("no upstream process")
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ping, _ := cat.Lookup("demo_ping")
	_, err := ping.Handler(context.Background(), json.RawMessage(`{"n":1}`))
	if se := sandbox.AsError(err, ""); err == nil || se.Code != sandbox.EToolFailed || !se.Retryable {
		t.Logf("call right after the kill: %v (the reconnect may have been quicker)", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if pid := set.pid("demo"); pid != 0 && pid != old {
			res := runJS(t, cat, `return await tools.demo_ping({n: 41})`)
			if res.OK && string(res.Result) == "42" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no working reconnect within 30s (pid %d, was %d)", set.pid("demo"), old)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestUpstreamListChanged adds a script to the upstream's .agents/tools:
// the upstream sends notifications/tools/list_changed and its new tool
// appears in our catalog as demo_hello.
func TestUpstreamListChanged(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".agents/tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo": map[string]any{"command": bin, "args": []string{"serve", "--trust-project", "--demo", "--isolation", "inprocess"}, "cwd": root, "timeout": "30s"},
	}})
	writeFile(t, filepath.Join(root, ".mcp.json"), string(cfg))
	cat, _ := tools.NewCatalog()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	set := Attach(ctx, cat, Options{Config: LoadConfig{Root: root}})
	t.Cleanup(set.Close)
	if _, ok := cat.Lookup("demo_ping"); !ok {
		t.Fatalf("demo_ping missing; warnings %v", set.Warnings())
	}
	changed := make(chan struct{}, 1)
	cat.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	script := "#!/bin/sh\n# @description Says hello.\n# @param *name string who\nprintf '\"hello %s\"' \"$SANDCALL_PARAM_NAME\"\n"
	if err := os.WriteFile(filepath.Join(root, ".agents/tools/hello"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		if _, ok := cat.Lookup("demo_hello"); ok {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("demo_hello not added within 10s; tools %v", set.Tools())
		}
	}
	res := runJS(t, cat, `return await tools.demo_hello({name: "ada"})`)
	if !res.OK || string(res.Result) != `"hello ada"` {
		t.Fatalf("demo_hello = %s %+v", res.Result, res.Error)
	}
}

// TestWrappedOutputSchema: sandcall's own tools wrap a non-object result as
// {"result": v}. A program gets v, described by the inner schema; a direct
// caller of the proxied tool sees the upstream's wrapper schema again, and
// its structured content matches it.
func TestWrappedOutputSchema(t *testing.T) {
	cat, set := demoSet(t)
	ping, _ := cat.Lookup("demo_ping")
	if ping.OutputSchema == nil || ping.OutputSchema.Type == "object" {
		t.Fatalf("demo_ping program schema = %+v, want the inner result schema", ping.OutputSchema)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The upstream's own listing.
	set.mu.Lock()
	conn := set.conns["demo"]
	set.mu.Unlock()
	var upstreamSchema any
	for tl, err := range conn.session().Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tl.Name == "ping" {
			upstreamSchema = tl.OutputSchema
		}
	}
	broker, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	cs := serveBroker(ctx, t, broker)
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if tl.Name != "demo_ping" {
			continue
		}
		var got, want any
		b, _ := json.Marshal(tl.OutputSchema)
		_ = json.Unmarshal(b, &got)
		b, _ = json.Marshal(upstreamSchema)
		_ = json.Unmarshal(b, &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("listed output schema %s, want the upstream's %s", mustJSON(got), mustJSON(want))
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo_ping", Arguments: map[string]any{"n": 4}})
		if err != nil || res.IsError || mustJSON(res.StructuredContent) != `{"result":5}` {
			t.Fatalf("direct demo_ping = %s, %v", mustJSON(res), err)
		}
		return
	}
	t.Fatal("demo_ping not listed")
}
