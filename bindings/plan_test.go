package bindings

import (
	"context"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
)

const planPolicy = `version: 1
rules:
  - name: approve-sends
    tools: [send]
    require_approval: true
plans:
  - name: read-and-send
    names: [read, "send*"]
    message: a program may not both read and send
`

// TestPlanRefusesBeforeRun: a program whose plan the policy refuses makes
// no call; the error names the rule; the result still shows the plan.
func TestPlanRefusesBeforeRun(t *testing.T) {
	e := newProgEnv(t, planPolicy, nil, echo("read"), echo("send"), echo("other"))
	res := runJS(t, e.r, LocalPrincipal, "await tools.other({});\nconst m = await tools.read({});\nawait tools.send(m);\nreturn 1")
	if res.OK || res.Error.Code != sandbox.EToolDenied || res.Error.Rule != "read-and-send" ||
		!strings.Contains(res.Error.Message, "before it runs: a program may not both read and send") || res.Error.Hint == "" {
		t.Fatalf("error %+v", res.Error)
	}
	if res.Calls.Total != 0 {
		t.Fatalf("%d calls were made", res.Calls.Total)
	}
	if res.Plan == nil || len(res.Plan.Tools) != 3 || res.Plan.Tools[2].Name != "send" || res.Plan.Tools[2].Line != 3 {
		t.Fatalf("plan %+v", res.Plan)
	}
	if !strings.Contains(e.audit.String(), `"tool":"run_code","decision":"error","rule":"read-and-send","code":"E_TOOL_DENIED"`) {
		t.Fatalf("audit:\n%s", e.audit.String())
	}
	if res := runJS(t, e.r, LocalPrincipal, "return await tools.read({})"); !res.OK {
		t.Fatalf("a reader alone: %+v", res.Error)
	}
}

// TestPlanDynamicChecked: a name computed at run time is checked against
// the plan rules at the call; once allowed, it stays allowed.
func TestPlanDynamicChecked(t *testing.T) {
	e := newProgEnv(t, planPolicy, nil, echo("read"), echo("send"), echo("other"))
	res := runJS(t, e.r, LocalPrincipal, `const n = ["se", "nd"].join("");
await tools.read({});
const a = await tools.call("other", {}).then(() => "ok");
const b = await tools[n]({}).catch((e) => e.rule);
return [a, b];`)
	if !res.OK || string(res.Result) != `["ok","read-and-send"]` || res.Plan.Dynamic != 1 {
		t.Fatalf("%s %+v plan %+v", res.Result, res.Error, res.Plan)
	}
	if res.Calls.Total != 3 || res.Calls.Denied != 1 {
		t.Fatalf("calls %+v", res.Calls)
	}
}

// TestPlanThroughPrograms: the plan the rules see names the tools of the
// programs it names: a program that reads, calling a program that sends,
// is refused; so is one that computes the sender's name.
func TestPlanThroughPrograms(t *testing.T) {
	files := map[string]string{"mailer.js": "// @description Sends.\nreturn await tools.send(args);"}
	e := newProgEnv(t, planPolicy, files, echo("read"), echo("send"))
	res := runJS(t, e.r, LocalPrincipal, "const m = await tools.read({});\nreturn await tools.mailer(m);")
	if res.OK || res.Error.Rule != "read-and-send" || res.Calls.Total != 0 {
		t.Fatalf("through a program: %+v calls %d", res.Error, res.Calls.Total)
	}
	res = runJS(t, e.r, LocalPrincipal, "await tools.read({});\nreturn await tools['mai' + 'ler']({}).catch((e) => e.rule);")
	if !res.OK || string(res.Result) != `"read-and-send"` {
		t.Fatalf("a computed program name: %s %+v", res.Result, res.Error)
	}
	// The program alone, directly: its own plan names send only.
	if _, err := e.b.Direct(context.Background(), DirectCall{Principal: LocalPrincipal, Tool: "mailer",
		Approver: ApproverFunc(func(_ context.Context, req ApprovalRequest) (bool, error) {
			if !strings.Contains(req.Message, "The program's plan: It names send (line 2).") {
				t.Errorf("approval prompt %q", req.Message)
			}
			return true, nil
		})}); err != nil {
		t.Fatalf("mailer directly: %v", err)
	}
}

func TestPlanSentence(t *testing.T) {
	for _, c := range []struct {
		p    *sandbox.Plan
		want string
	}{
		{nil, "Its plan could not be read."},
		{&sandbox.Plan{}, "It names no tool."},
		{&sandbox.Plan{Tools: []sandbox.PlanTool{{Name: "a", Line: 1}, {Name: "b"}}, Dynamic: 2}, "It names a (line 1), b; 2 tool names are computed at run time."},
	} {
		if got := PlanSentence(c.p); got != c.want {
			t.Errorf("%+v: %q", c.p, got)
		}
	}
}
