package inbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/inbox"
	"github.com/sandcall/sandcall/examples/policies"
	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

type outcome struct {
	Tickets   []string `json:"tickets"`
	Forwarded []struct {
		Message, To string
	} `json:"forwarded"`
	Refused []struct {
		Message string `json:"message"`
		To      string `json:"to"`
		Code    string `json:"code"`
		Rule    string `json:"rule"`
		Error   string `json:"error"`
	} `json:"refused"`
}

// run runs Program on a fresh inbox under the flow policy (or the default
// policy when flow is false) and returns the result, the inbox and the
// audit trail.
func run(t *testing.T, injected, flow bool) (*sandbox.Result, outcome, *inbox.Inbox, string) {
	t.Helper()
	ib := inbox.New(injected)
	cat, err := tools.NewCatalog(ib.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	var audit bytes.Buffer
	cfg := bindings.BrokerConfig{Catalog: cat, Audit: slog.New(slog.NewJSONHandler(&audit, nil))}
	if flow {
		c, err := policy.Parse("flow.yaml", policies.Flow)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Authorizer = bindings.NewPolicyAuthorizer(c)
	}
	b, err := bindings.NewBroker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Source: inbox.Program}})
	if !res.OK {
		t.Fatalf("run failed: %v", res.Error)
	}
	var o outcome
	if err := json.Unmarshal(res.Result, &o); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	return res, o, ib, audit.String()
}

func sentTo(ib *inbox.Inbox, addr string) bool {
	for _, m := range ib.Sent() {
		for _, to := range m.To {
			if to == addr {
				return true
			}
		}
	}
	return false
}

// Without the flow rule, the injected instruction exfiltrates a customer
// record: the attack works, which is what the demo shows first.
func TestInjectionSucceedsWithoutFlowRule(t *testing.T) {
	_, o, ib, _ := run(t, true, false)
	if !sentTo(ib, inbox.Attacker) || len(o.Forwarded) != 1 {
		t.Fatalf("want the record sent to %s without the flow rule; forwarded %+v, sent %+v", inbox.Attacker, o.Forwarded, ib.Sent())
	}
}

// Under flow.yaml, the exfiltrating call is denied with the rule and the
// flow named, in the error and the audit record; the legitimate work (three
// tickets, the digest to the support team) completes.
func TestFlowRuleStopsExfiltration(t *testing.T) {
	res, o, ib, audit := run(t, true, true)
	if sentTo(ib, inbox.Attacker) {
		t.Fatalf("the record reached %s: %+v", inbox.Attacker, ib.Sent())
	}
	if len(o.Refused) != 1 || o.Refused[0].Code != "E_TOOL_DENIED" || o.Refused[0].To != inbox.Attacker ||
		o.Refused[0].Rule != "no-exfiltration" || o.Refused[0].Message != inbox.InjectedID {
		t.Fatalf("refused = %+v", o.Refused)
	}
	msg := o.Refused[0].Error
	for _, want := range []string{"list_messages (call 1, untrusted)", "get_customer (call 2", "support@acme.example"} {
		if !strings.Contains(msg, want) {
			t.Errorf("denial message %q does not name %q", msg, want)
		}
	}
	if len(o.Tickets) != 3 || len(ib.Tickets()) != 3 || !sentTo(ib, inbox.SupportTeam) {
		t.Errorf("legitimate work: tickets %v, sent %+v", o.Tickets, ib.Sent())
	}
	if res.Calls.Denied != 1 {
		t.Errorf("calls = %+v", res.Calls)
	}
	var denied map[string]any
	for _, line := range strings.Split(audit, "\n") {
		if strings.Contains(line, `"decision":"deny"`) {
			_ = json.Unmarshal([]byte(line), &denied)
		}
	}
	if denied["rule"] != "no-exfiltration" || !strings.Contains(denied["flow"].(string), "list_messages (call 1, untrusted)") {
		t.Errorf("audit record of the denial = %v", denied)
	}
	if !strings.Contains(audit, `"label":"untrusted, readers [support@acme.example]"`) {
		t.Errorf("the run's audit record lacks its label:\n%s", audit)
	}
	sl := res.Meta["security_label"].(map[string]any)
	if sl["integrity"] != "untrusted" || res.Meta["untrusted"] != true || res.Meta["sensitive"] != true {
		t.Errorf("result label = %v", res.Meta)
	}
}

// The same program on the same inbox without the injection: nothing is
// denied (no false denial), and the work is the same.
func TestFlowRuleNoFalseDenial(t *testing.T) {
	res, o, ib, _ := run(t, false, true)
	if res.Calls.Denied != 0 || len(o.Refused) != 0 || len(o.Forwarded) != 0 {
		t.Fatalf("calls %+v, refused %+v", res.Calls, o.Refused)
	}
	if len(ib.Tickets()) != 3 || len(ib.Sent()) != 1 || !sentTo(ib, inbox.SupportTeam) {
		t.Errorf("tickets %v, sent %+v", ib.Tickets(), ib.Sent())
	}
}
