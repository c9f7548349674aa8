package policy

import (
	"strings"
	"testing"
)

const plansPolicy = `version: 1
rules:
  - name: reads
    tools: [list_messages]
plans:
  - name: read-then-send
    names: [list_messages, "send_*"]
    message: a program may not both read the inbox and send mail
    hint: read in one program, send from another the user reviews
  - name: no-dynamic-for-guests
    refuse_when: 'plan.dynamic > 0 && !("staff" in principal.roles)'
  - name: no-network-modules
    names: [fetch_url]
    refuse_when: 'plan.language == "wasm"'
`

func TestDecidePlan(t *testing.T) {
	c, err := Parse("p.yaml", []byte(plansPolicy))
	if err != nil {
		t.Fatal(err)
	}
	if !c.HasPlanRules() || Default().HasPlanRules() {
		t.Fatal("HasPlanRules")
	}
	cases := []struct {
		req  PlanRequest
		rule string // "" for allowed
		msg  string
	}{
		{PlanRequest{Tools: []string{"list_messages", "get_customer"}}, "", ""},
		{PlanRequest{Tools: []string{"send_email"}}, "", ""},
		{PlanRequest{Tools: []string{"get_customer", "send_email", "list_messages"}}, "read-then-send", "a program may not both read the inbox and send mail"},
		{PlanRequest{Tools: []string{"x"}, Dynamic: 1}, "no-dynamic-for-guests", "the policy refuses a program whose plan matches plan.dynamic > 0"},
		{PlanRequest{Tools: []string{"x"}, Dynamic: 1, Principal: Principal{Roles: []string{"staff"}}}, "", ""},
		{PlanRequest{Tools: []string{"fetch_url"}, Language: "javascript"}, "", ""},
		{PlanRequest{Tools: []string{"fetch_url"}, Language: "wasm"}, "no-network-modules", "names fetch_url and matches"},
	}
	for i, tc := range cases {
		d := c.DecidePlan(&tc.req)
		if tc.rule == "" {
			if !d.Allow || d.Rule != "default" {
				t.Errorf("case %d: %+v, want allowed", i, d)
			}
			continue
		}
		if d.Allow || d.Rule != tc.rule || !strings.Contains(d.Message+d.Reason, tc.msg) || d.Hint == "" {
			t.Errorf("case %d: %+v, want refused by %s (%q)", i, d, tc.rule, tc.msg)
		}
	}
	if d := c.DecidePlan(nil); d.Allow {
		t.Fatal("a nil request was allowed")
	}
	if d := Default().DecidePlan(&PlanRequest{Tools: []string{"anything"}, Dynamic: 9}); !d.Allow {
		t.Fatal("the default policy refused a plan")
	}
}

func TestPlanRuleProblems(t *testing.T) {
	for src, want := range map[string]string{
		"plans:\n  - name: x\n":                                    "set names, refuse_when or both",
		"plans:\n  - names: []\n":                                  "names: empty list",
		"plans:\n  - names: [\"a[\"]\n":                            "bad glob",
		"plans:\n  - refuse_when: 'plan.nope'\n":                   "refuse_when:",
		"plans:\n  - refuse_when: 'plan.tools'\n":                  "refuse_when:",
		"plans:\n  - refuse_when: 'args.x == 1'\n":                 "refuse_when:",
		"plans:\n  - {name: default, names: [a]}\n":                "reserved",
		"rules:\n  - name: r\nplans:\n  - {name: r, names: [a]}\n": "already used",
		"plans:\n  - {names: [a], when: 'true'}\n":                 "unknown key",
	} {
		_, err := Parse("p.yaml", []byte("version: 1\n"+src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

// TestSaveProgramApproval: save_program needs a person's approval when no
// rule selects it, in the default policy and in a file; a rule that
// selects it decides.
func TestSaveProgramApproval(t *testing.T) {
	req := &Request{Caller: Direct, Tool: "save_program", Meta: ToolMeta{AllowedCallers: []string{Direct}}}
	d := Default().Decide(req)
	if !d.Allow || !d.RequireApproval || d.Rule != "default.approval" {
		t.Fatalf("default policy: %+v", d)
	}
	c, _ := Parse("p.yaml", []byte("version: 1\ndefaults: {allowed_callers: [direct, code]}\nrules:\n  - tools: [other]\n"))
	if d := c.Decide(req); !d.RequireApproval || d.Rule != "default.approval" {
		t.Fatalf("a file that does not select it: %+v", d)
	}
	c, _ = Parse("p.yaml", []byte("version: 1\nrules:\n  - name: trusted-saves\n    tools: [save_program]\n"))
	if d := c.Decide(req); !d.Allow || d.RequireApproval || d.Rule != "trusted-saves" {
		t.Fatalf("a rule selecting it: %+v", d)
	}
	if d := Default().Decide(&Request{Caller: Code, Tool: "save_program", Meta: ToolMeta{AllowedCallers: []string{Direct}}}); d.Allow {
		t.Fatalf("code saved a program: %+v", d)
	}
}
