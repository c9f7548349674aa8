package bindings

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/programs"
)

// progEnv is a broker whose catalog holds ts, the programs of a directory
// and the saved programs of a memory store, with save_program, and a
// runner of in-process JavaScript.
type progEnv struct {
	b     *Broker
	r     *Runner
	saved *programs.Saved
	audit *bytes.Buffer
}

func newProgEnv(t *testing.T, pol string, files map[string]string, ts ...*tools.Tool) *progEnv {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg := programs.NewRegistry()
	d, finds := programs.LoadDir(reg, programs.DirConfig{Dir: dir})
	for _, f := range finds {
		if f.Reason != "" {
			t.Fatalf("program file %s: %s", f.File, f.Reason)
		}
	}
	saved := programs.NewSaved(reg, programs.SavedConfig{Store: store.NewMemory()})
	cat, err := tools.NewCatalog(append(ts, programs.SaveTool(saved))...)
	if err != nil {
		t.Fatal(err)
	}
	d.AddTo(cat)
	saved.AddTo(cat)
	var audit bytes.Buffer
	cfg := BrokerConfig{Catalog: cat, Programs: reg, Audit: slog.New(slog.NewJSONHandler(&audit, nil))}
	if pol != "" {
		c, err := policy.Parse("p.yaml", []byte(pol))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Authorizer = NewPolicyAuthorizer(c)
	}
	b, err := NewBroker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(RunnerConfig{Broker: b, Executor: js.New(js.Config{}), Limits: sandbox.Limits{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	reg.SetRunner(r)
	return &progEnv{b: b, r: r, saved: saved, audit: &audit}
}

func (e *progEnv) save(t *testing.T, p Principal, args string) {
	t.Helper()
	_, err := e.b.Direct(context.Background(), DirectCall{Principal: p, Tool: programs.SaveToolName, Args: json.RawMessage(args),
		Approver: ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return true, nil })})
	if err != nil {
		t.Fatalf("save: %v", err)
	}
}

const sumProgram = `// @description Sums the n field of echo's answer for each value.
// @param *values array the numbers
// @readonly
const out = [];
for (const v of args.values) out.push((await tools.echo({n: v})).n);
return out.reduce((a, b) => a + b, 0);
`

// TestProgramFileIsTool: a file of the programs directory is a tool with
// its header's description, schema and effects, callable from code and
// directly; a program's result carries its plan.
func TestProgramFileIsTool(t *testing.T) {
	e := newProgEnv(t, "", map[string]string{"sum_values.js": sumProgram}, echo("echo"))
	tl, ok := e.b.Catalog().Lookup("sum_values")
	if !ok || tl.Source != programs.SourceFile || !tl.Effects.ReadOnly || !strings.HasPrefix(tl.Description, "Sums the n field") {
		t.Fatalf("tool %+v", tl)
	}
	res := runJS(t, e.r, LocalPrincipal, `return await tools.sum_values({values: [1, 2, 3]})`)
	if !res.OK || string(res.Result) != "6" {
		t.Fatalf("from code: %s %+v", res.Result, res.Error)
	}
	if res.Plan == nil || len(res.Plan.Tools) != 1 || res.Plan.Tools[0].Name != "sum_values" {
		t.Fatalf("plan %+v", res.Plan)
	}
	out, err := e.b.CallDirect(context.Background(), LocalPrincipal, "sum_values", json.RawMessage(`{"values":[4,5]}`))
	if err != nil || string(out) != "9" {
		t.Fatalf("direct: %s %v", out, err)
	}
	if _, err := e.b.CallDirect(context.Background(), LocalPrincipal, "sum_values", json.RawMessage(`{"values":"x"}`)); code(err) != sandbox.EToolArgs {
		t.Fatalf("bad args: %v", err)
	}
	// The program's own run is audited under the call that ran it.
	if !strings.Contains(e.audit.String(), `"tool":"sum_values","decision":"ok"`) || !strings.Contains(e.audit.String(), `"parent_run":"run_`) {
		t.Fatalf("audit:\n%s", e.audit.String())
	}
}

// TestProgramRunsAsCaller: a program's calls are its caller's, as a
// program's: a tool programs may not call is denied inside it whoever
// calls it, and another principal's policy roles are not borrowed.
func TestProgramRunsAsCaller(t *testing.T) {
	pol := `version: 1
rules:
  - name: finance-only
    tools: [payroll]
    when: '"finance" in principal.roles'
`
	src := "// @description Calls the two tools.\nreturn [await tools.payroll({}).catch((e) => e.rule), await tools.wipe({}).catch((e) => e.code)];"
	e := newProgEnv(t, pol, map[string]string{"both.js": src}, echo("payroll"), mk("wipe", destructive))
	alice := Principal{ID: "alice", Roles: []string{"finance"}}
	bob := Principal{ID: "bob"}
	for _, c := range []struct {
		p    Principal
		want string
	}{{alice, `[{},"E_TOOL_DENIED"]`}, {bob, `["finance-only","E_TOOL_DENIED"]`}} {
		out, err := e.b.CallDirect(context.Background(), c.p, "both", nil)
		if err != nil || string(out) != c.want {
			t.Errorf("%s directly: %s %v, want %s", c.p.ID, out, err, c.want)
		}
		res := runJS(t, e.r, c.p, `return await tools.both({})`)
		if string(res.Result) != c.want {
			t.Errorf("%s from code: %s %+v", c.p.ID, res.Result, res.Error)
		}
	}
	// wipe is destructive: direct-only for the model, never from a program.
	if _, err := e.b.CallDirect(context.Background(), bob, "wipe", nil); err != nil {
		t.Fatalf("wipe directly: %v", err)
	}
}

// TestProgramLabelJoinsCaller: what a program read taints the run that
// called it; what the caller had read taints the program's calls.
func TestProgramLabelJoinsCaller(t *testing.T) {
	liar := labelled("liar", nil, tools.Effects{})
	files := map[string]string{
		"reader.js":  "// @description Reads the liar.\nconst m = await tools.liar({}); return m.text.length;",
		"dropper.js": "// @description Drops.\nawait tools.drop({}); return 'dropped';",
	}
	e := &progEnv{}
	c, _ := policy.Parse("flow.yaml", []byte(flowPolicy))
	e = newProgEnvAuth(t, NewPolicyAuthorizer(c), files, liar, mk("drop", destructive))
	res := runJS(t, e.r, LocalPrincipal, `await tools.reader({}); await tools.drop({}); return 1`)
	if res.OK || res.Error.Rule != "no-untrusted-destruction" || !strings.Contains(res.Error.Message, "reader") {
		t.Fatalf("the program's read did not taint its caller: %+v", res.Error)
	}
	res = runJS(t, e.r, LocalPrincipal, `await tools.liar({}); return await tools.dropper({})`)
	if res.OK || res.Error.Rule != "no-untrusted-destruction" {
		t.Fatalf("the caller's read did not taint the program's calls: %s %+v", res.Result, res.Error)
	}
	res = runJS(t, e.r, LocalPrincipal, `return await tools.dropper({})`)
	if !res.OK {
		t.Fatalf("a clean run calling the dropper: %+v", res.Error)
	}
}

func newProgEnvAuth(t *testing.T, a Authorizer, files map[string]string, ts ...*tools.Tool) *progEnv {
	e := newProgEnv(t, "", files, ts...)
	e.b.SetAuthorizer(a)
	return e
}

// TestProgramDepth: programs nest at most MaxProgramDepth deep.
func TestProgramDepth(t *testing.T) {
	files := map[string]string{"rec.js": "// @description Recurses.\n// @param n integer depth so far\nconst n = (args.n || 0) + 1;\ntry { return await tools.rec({n}); } catch (e) { return {n, code: e.code}; }"}
	e := newProgEnv(t, "", files)
	res := runJS(t, e.r, LocalPrincipal, `return await tools.rec({})`)
	if !res.OK || string(res.Result) != `{"n":3,"code":"E_TOOL_CALL_LIMIT"}` {
		t.Fatalf("%s %+v", res.Result, res.Error)
	}
}

// TestSaveProgram: save_program needs a person's approval (the default
// policy), whose prompt shows the plan; the program is then its owner's
// tool, a new version replaces it, and another principal cannot see,
// call or take it.
func TestSaveProgram(t *testing.T) {
	e := newProgEnv(t, "", nil, echo("echo"))
	alice, bob := Principal{ID: "alice"}, Principal{ID: "bob"}
	args := `{"name":"double","description":"Doubles n with echo.","parameters":{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]},"code":"const r = await tools.echo({n: args.n * 2}); return r.n;"}`
	if _, err := e.b.CallDirect(context.Background(), alice, programs.SaveToolName, json.RawMessage(args)); code(err) != sandbox.EToolDenied ||
		err.(*sandbox.Error).Rule != "default.approval" {
		t.Fatalf("a save nobody approved: %v", err)
	}
	var asked ApprovalRequest
	out, err := e.b.Direct(context.Background(), DirectCall{Principal: alice, Tool: programs.SaveToolName, Args: json.RawMessage(args),
		Approver: ApproverFunc(func(_ context.Context, req ApprovalRequest) (bool, error) { asked = req; return true, nil })})
	if err != nil {
		t.Fatal(err)
	}
	if asked.Plan == nil || !strings.Contains(asked.Message, "It saves the program double (version ") ||
		!strings.Contains(asked.Message, "It names echo (line 1).") {
		t.Fatalf("approval prompt %q", asked.Message)
	}
	var sr programs.SaveResult
	if json.Unmarshal(out, &sr) != nil || sr.Name != "double" || len(sr.Version) != 12 || sr.Plan.Tools[0].Name != "echo" {
		t.Fatalf("save result %s", out)
	}
	res := runJS(t, e.r, alice, `return await tools.double({n: 21})`)
	if !res.OK || string(res.Result) != "42" {
		t.Fatalf("alice calls her program: %s %+v", res.Result, res.Error)
	}
	if tl, _ := e.b.Catalog().Lookup("double"); tl.Source != programs.SourceSaved || !strings.Contains(tl.Description, "it calls echo") {
		t.Fatalf("tool %+v", tl)
	}
	res = runJS(t, e.r, bob, `return await tools.double({n: 21})`)
	if res.OK || res.Error.Code != sandbox.EToolUnknown || strings.Contains(res.Error.Message, "removed") {
		t.Fatalf("bob calls alice's program: %+v", res.Error)
	}
	for _, tl := range e.b.Exposed(tools.Direct, bob) {
		if tl.Name == "double" {
			t.Fatal("alice's program is listed to bob")
		}
	}
	if _, err := e.b.Direct(context.Background(), DirectCall{Principal: bob, Tool: programs.SaveToolName, Args: json.RawMessage(args),
		Approver: ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return true, nil })}); code(err) != sandbox.EToolArgs {
		t.Fatalf("bob takes alice's name: %v", err)
	}
	// A changed program is a new version.
	e.save(t, alice, strings.Replace(args, "args.n * 2", "args.n * 3", 1))
	if res := runJS(t, e.r, alice, `return await tools.double({n: 2})`); string(res.Result) != "6" {
		t.Fatalf("the new version: %s %+v", res.Result, res.Error)
	}
	// Bad saves say which argument is wrong.
	for _, c := range []struct{ args, path string }{
		{`{"name":"save_program","description":"x","code":"return 1"}`, "/name"},
		{`{"name":"echo","description":"x","code":"return 1"}`, "/name"},
		{`{"name":"x","description":"","code":"return 1"}`, "/description"},
		{`{"name":"x","description":"d","code":"return ("}`, "/code"},
		{`{"name":"x","description":"d","parameters":{"type":"array"},"code":"return 1"}`, "/parameters"},
		{`{"name":"x","description":"d","parameters":{"type":"object","properties":{"a":{"pattern":"(?<"}}},"code":"return 1"}`, "/parameters"},
	} {
		_, err := e.b.Direct(context.Background(), DirectCall{Principal: alice, Tool: programs.SaveToolName, Args: json.RawMessage(c.args),
			Approver: ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return true, nil })})
		var se *sandbox.Error
		if !asErr(err, &se) || se.Path != c.path {
			t.Errorf("%s: %v, want an error at %s", c.args, err, c.path)
		}
	}
}

func asErr(err error, se **sandbox.Error) bool {
	e, ok := err.(*sandbox.Error)
	*se = e
	return ok
}

// TestSavedProgramsShared: a program saved through one broker is a tool of
// another sharing the store once it syncs (replicas sharing Redis).
func TestSavedProgramsShared(t *testing.T) {
	st := store.NewMemory()
	mk := func() (*Broker, *programs.Saved) {
		reg := programs.NewRegistry()
		saved := programs.NewSaved(reg, programs.SavedConfig{Store: st})
		cat, _ := tools.NewCatalog(echo("echo"), programs.SaveTool(saved))
		saved.AddTo(cat)
		b := newBrokerCat(t, cat, reg)
		r, _ := NewRunner(RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
		reg.SetRunner(r)
		return b, saved
	}
	b1, _ := mk()
	b2, s2 := mk()
	_, err := b1.Direct(context.Background(), DirectCall{Principal: LocalPrincipal, Tool: programs.SaveToolName,
		Args:     json.RawMessage(`{"name":"hello","description":"Says hello.","code":"return 'hello ' + (args.who || 'world')"}`),
		Approver: ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return true, nil })})
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	out, err := b2.CallDirect(context.Background(), LocalPrincipal, "hello", nil)
	if err != nil || string(out) != `"hello world"` {
		t.Fatalf("the other broker: %s %v", out, err)
	}
}

func newBrokerCat(t *testing.T, cat *tools.Catalog, reg *programs.Registry) *Broker {
	b, err := NewBroker(BrokerConfig{Catalog: cat, Programs: reg})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProgramCallsCountForTheRun: the calls of the program tools a run
// calls count against the run's call limit, at every depth.
func TestProgramCallsCountForTheRun(t *testing.T) {
	files := map[string]string{"ten.js": "// @description Ten calls.\nfor (let i = 0; i < 10; i++) await tools.echo({i});\nreturn 10;"}
	e := newProgEnv(t, "", files, echo("echo"))
	res := e.r.Run(context.Background(), RunRequest{Program: sandbox.Program{Source: `let n = 0;
for (let i = 0; i < 5; i++) { try { n += await tools.ten({}); } catch (err) { return {n, code: err.code}; } }
return {n};`}, Limits: sandbox.Limits{MaxCalls: 25}})
	if !res.OK || string(res.Result) != `{"n":20,"code":"E_TOOL_CALL_LIMIT"}` {
		t.Fatalf("%s %+v", res.Result, res.Error)
	}
}
