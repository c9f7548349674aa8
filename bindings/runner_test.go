package bindings

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// scriptExec is an Executor that makes the calls it is given and returns
// their results as a JSON array; it stands in for an engine so that the
// Runner's own work (limits, bindings, stats, assembly) is tested alone. The
// engines have their own tests, and the end-to-end tests use the real ones.
type scriptExec struct {
	calls []string
	job   *sandbox.Job
	fail  *sandbox.Error
}

func (s *scriptExec) Execute(ctx context.Context, job *sandbox.Job, host sandbox.Host) *sandbox.Outcome {
	s.job = job
	var out []json.RawMessage
	for _, c := range s.calls {
		res, err := host.Call(ctx, c, json.RawMessage(`{}`))
		if err != nil {
			res = json.RawMessage(`"` + string(sandbox.AsError(err, "").Code) + `"`)
		}
		out = append(out, res)
	}
	if s.fail != nil {
		return &sandbox.Outcome{Err: s.fail, Logs: []string{"partial"}}
	}
	v, _ := json.Marshal(out)
	return &sandbox.Outcome{Value: v}
}

func TestRunnerAssemblesResult(t *testing.T) {
	d := echo("direct_only")
	d.AllowedCallers = []tools.Caller{tools.Direct}
	b := newBroker(t, BrokerConfig{}, echo("a"), echo("b"), d)
	ex := &scriptExec{calls: []string{"a", "a", "b", "direct_only", "zzz"}}
	r, err := NewRunner(RunnerConfig{Broker: b, Executor: ex, Limits: sandbox.Limits{Timeout: 5 * time.Second, MaxCalls: 100}})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: "x"},
		Limits: sandbox.Limits{Timeout: time.Hour, MaxCalls: 50}})
	if !res.OK || res.Error != nil {
		t.Fatalf("result = %+v", res)
	}
	if got := string(res.Result); got != `[{},{},{},"E_TOOL_DENIED","E_TOOL_UNKNOWN"]` {
		t.Errorf("result = %s", got)
	}
	c := res.Calls
	if c.Total != 5 || c.OK != 3 || c.Denied != 1 || c.Failed != 1 || c.ByTool["a"] != 2 || c.ByTool["b"] != 1 {
		t.Errorf("calls = %+v", c)
	}
	if !strings.HasPrefix(res.RunID, "run_") || res.Logs == nil {
		t.Errorf("run id %q, logs %v", res.RunID, res.Logs)
	}
	// Limits: lowered by the request, never raised past the ceiling.
	if ex.job.Limits.Timeout != 5*time.Second || ex.job.Limits.MaxCalls != 50 {
		t.Errorf("job limits = %+v", ex.job.Limits)
	}
	// Direct-only tools are not bound in programs.
	if got := strings.Join(ex.job.Tools, ","); got != "a,b" {
		t.Errorf("bound tools = %s", got)
	}
}

func TestRunnerFailure(t *testing.T) {
	b := newBroker(t, BrokerConfig{}, echo("a"))
	ex := &scriptExec{calls: []string{"a"}, fail: sandbox.Errorf(sandbox.EGuestError, "", "boom")}
	r, _ := NewRunner(RunnerConfig{Broker: b, Executor: ex})
	res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: "x"}})
	if res.OK || res.Error.Code != sandbox.EGuestError || string(res.Result) != "null" {
		t.Fatalf("result = %+v", res)
	}
	if res.Calls.Total != 1 || len(res.Logs) != 1 {
		t.Errorf("partial calls/logs lost: %+v", res)
	}
}

func TestRunnerRejectsLanguage(t *testing.T) {
	b := newBroker(t, BrokerConfig{})
	ex := &scriptExec{}
	r, _ := NewRunner(RunnerConfig{Broker: b, Executor: ex})
	res := r.Run(context.Background(), RunRequest{Program: sandbox.Program{Language: sandbox.WASM}})
	if res.OK || res.Error == nil || res.Error.Hint == "" || ex.job != nil {
		t.Fatalf("result = %+v", res)
	}
}

func TestLimitsNeverRaised(t *testing.T) {
	ceiling := sandbox.Limits{Timeout: 2 * time.Second, MaxCalls: 10, MaxResultBytes: 100}
	b := newBroker(t, BrokerConfig{})
	r, _ := NewRunner(RunnerConfig{Broker: b, Executor: &scriptExec{}, Limits: ceiling})
	got := r.requestLimits(sandbox.Limits{Timeout: time.Minute, MaxCalls: 1 << 20, MaxResultBytes: 1 << 30, MaxLogBytes: 10})
	if got.Timeout != 2*time.Second || got.MaxCalls != 10 || got.MaxResultBytes != 100 || got.MaxLogBytes != 10 {
		t.Fatalf("limits = %+v", got)
	}
	if d := sandbox.DefaultLimits(); got.MaxInFlight != d.MaxInFlight || got.MemoryBytes != d.MemoryBytes {
		t.Fatalf("unset limits not defaulted: %+v", got)
	}
}

// moduleExec records the module of the job it runs.
type moduleExec struct{ got []byte }

func (m *moduleExec) Execute(_ context.Context, job *sandbox.Job, _ sandbox.Host) *sandbox.Outcome {
	m.got = job.Program.Module
	return &sandbox.Outcome{Value: []byte("null")}
}

func TestRunnerModuleByHash(t *testing.T) {
	b := newBroker(t, BrokerConfig{})
	ex := &moduleExec{}
	r, _ := NewRunner(RunnerConfig{Broker: b, Executor: ex, Languages: []sandbox.Language{sandbox.WASM}})
	mod := []byte("\x00asm\x01\x00\x00\x00")
	wasm := func(module []byte, sha string) *sandbox.Result {
		return r.Run(context.Background(), RunRequest{Program: sandbox.Program{Language: sandbox.WASM, Module: module}, ModuleSHA256: sha})
	}
	if res := wasm(mod, ""); !res.OK || string(ex.got) != string(mod) {
		t.Fatalf("first run: %+v", res.Error)
	}
	ex.got = nil
	if res := wasm(nil, ModuleSHA256(mod)); !res.OK || string(ex.got) != string(mod) {
		t.Fatalf("by hash: %+v, module %q", res.Error, ex.got)
	}
	for _, tc := range []struct {
		module []byte
		sha    string
	}{
		{nil, ""},                              // nothing at all
		{nil, ModuleSHA256([]byte("unseen"))},  // never sent
		{mod, ModuleSHA256([]byte("another"))}, // hash does not match the bytes
	} {
		if res := wasm(tc.module, tc.sha); res.OK || res.Error.Code != sandbox.EModuleInvalid || res.Error.Hint == "" {
			t.Errorf("module %q sha %q: %+v", tc.module, tc.sha, res.Error)
		}
	}
}
