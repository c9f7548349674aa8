package bindings

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// TestToolErrorsFromJS runs a real JavaScript program through the Runner
// and the broker: the ToolError a program catches carries every field the
// prelude promises (code, message, hint, retryable, tool, path,
// allowed_values, rule, reason); retries, cut outputs and deprecated names
// show in the run's result.
func TestToolErrorsFromJS(t *testing.T) {
	level := echo("level")
	level.InputSchema = &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{"level": {Enum: []any{"L1", "L2"}}}}
	directOnly := echo("direct_only")
	directOnly.AllowedCallers = []tools.Caller{tools.Direct}
	failing := func(name string, err error) *tools.Tool {
		x := echo(name)
		x.Handler = func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, err }
		return x
	}
	var flakyCalls atomic.Int32
	prices := echo("get_prices")
	prices.Aliases = []tools.Alias{{Name: "prices", Until: aliasUntil}, {Name: "old_prices"}}
	b := newBroker(t, BrokerConfig{RetryBackoff: time.Microsecond, Now: clock(aliasUntil.Add(-time.Hour))},
		level, directOnly, prices, rows("list", 50, 100, false),
		flaky("flaky", true, 1, tools.Transient("busy", ""), &flakyCalls),
		failing("transient", tools.Transient("backend busy", "Try again in a minute.")),
		failing("unavailable", tools.Unavailable("no price for that day", "Pick a trading day.")),
	)
	r, err := NewRunner(RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	src := `
const fields = (e) => ({ isToolError: e instanceof ToolError, name: e.name, code: e.code, message: e.message,
  hint: e.hint, retryable: e.retryable, tool: e.tool, path: e.path, allowed_values: e.allowed_values,
  rule: e.rule, reason: e.reason })
const catching = async (f) => { try { await f(); return null } catch (e) { return fields(e) } }
return {
  args: await catching(() => tools.level({ level: 'L9' })),
  denied: await catching(() => tools.call('direct_only', {})),
  transient: await catching(() => tools.transient({})),
  unavailable: await catching(() => tools.unavailable({})),
  tombstone: await catching(() => tools.old_prices({})),
  flaky: await tools.flaky({ x: 1 }),
  alias: await tools.prices({ day: 'mon' }),
  aliasCall: await tools.call('prices', { day: 'tue' }),
  rows: (await tools.list({})).length,
}`
	res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: src}})
	if !res.OK {
		t.Fatalf("run failed: %+v", res.Error)
	}
	type fields struct {
		IsToolError   bool   `json:"isToolError"`
		Name          string `json:"name"`
		Code          string `json:"code"`
		Message       string `json:"message"`
		Hint          string `json:"hint"`
		Retryable     bool   `json:"retryable"`
		Tool          string `json:"tool"`
		Path          string `json:"path"`
		AllowedValues []any  `json:"allowed_values"`
		Rule          string `json:"rule"`
		Reason        string `json:"reason"`
	}
	var got struct {
		Args, Denied, Transient, Unavailable, Tombstone fields
		Flaky                                           map[string]any
		Alias, AliasCall                                map[string]any
		Rows                                            int
	}
	if err := json.Unmarshal(res.Result, &got); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]fields{"args": got.Args, "denied": got.Denied, "transient": got.Transient,
		"unavailable": got.Unavailable, "tombstone": got.Tombstone} {
		if !f.IsToolError || f.Name != "ToolError" || f.Code == "" || f.Message == "" || f.Hint == "" || f.Tool == "" {
			t.Errorf("%s: %+v, want a ToolError with code, message, hint and tool", name, f)
		}
	}
	if a := got.Args; a.Code != "E_TOOL_ARGS" || a.Path != "/level" || len(a.AllowedValues) != 2 || a.Reason != "invalid_input" || a.Retryable {
		t.Errorf("args: %+v", a)
	}
	if d := got.Denied; d.Code != "E_TOOL_DENIED" || d.Rule == "" || d.Reason != "denied" {
		t.Errorf("denied: %+v", d)
	}
	if x := got.Transient; x.Code != "E_TOOL_FAILED" || !x.Retryable || x.Reason != "transient" || x.Hint != "Try again in a minute." {
		t.Errorf("transient: %+v", x)
	}
	if x := got.Unavailable; x.Code != "E_TOOL_FAILED" || x.Retryable || x.Reason != "unavailable" {
		t.Errorf("unavailable: %+v", x)
	}
	if x := got.Tombstone; x.Code != "E_TOOL_UNKNOWN" || !strings.Contains(x.Hint, "get_prices") {
		t.Errorf("tombstone: %+v", x)
	}
	if got.Flaky["x"] != float64(1) || flakyCalls.Load() != 2 {
		t.Errorf("flaky: %v after %d calls", got.Flaky, flakyCalls.Load())
	}
	for _, a := range []map[string]any{got.Alias, got.AliasCall} {
		if s, _ := a["next_action"].(string); !strings.Contains(s, "get_prices") || a["day"] == nil {
			t.Errorf("alias result %v, want the result with a next_action", a)
		}
	}
	if got.Rows < 1 || got.Rows >= 50 {
		t.Errorf("rows = %d, want a cut list", got.Rows)
	}
	c := res.Calls
	if c.Retries != 1 || c.Truncated != 1 || c.ByTool["get_prices"] != 2 {
		t.Errorf("calls = %+v", c)
	}
	logs := strings.Join(res.Logs, "\n")
	if !strings.Contains(logs, "[sandcall] tool list") || !strings.Contains(logs, "[sandcall] Call get_prices instead of prices") {
		t.Errorf("logs = %q", res.Logs)
	}

	// An uncaught ToolError ends the run with its code, and its fields.
	res = r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: `await tools.unavailable({})`}})
	var e *sandbox.Error
	if res.OK || !errors.As(res.Error, &e) || e.Code != sandbox.EToolFailed {
		t.Fatalf("uncaught: %+v", res.Error)
	}
}
