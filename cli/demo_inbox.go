package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/inbox"
	"github.com/sandcall/sandcall/examples/policies"
	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
)

// inboxOutcome is the inbox program's result.
type inboxOutcome struct {
	Tickets   []string `json:"tickets"`
	Forwarded []struct {
		Message string `json:"message"`
		To      string `json:"to"`
	} `json:"forwarded"`
	Refused []struct {
		Message string `json:"message"`
		To      string `json:"to"`
		Code    string `json:"code"`
		Rule    string `json:"rule"`
		Error   string `json:"error"`
	} `json:"refused"`
}

// demoInbox runs the support-inbox triage program twice on an inbox whose
// message M-3 carries a prompt injection: without a flow rule (the record
// leaves), then under the flow policy (examples/policies/flow.yaml, or
// --policy): the exfiltrating call is denied with the flow named, and the
// legitimate work completes. It fails when the record leaves in the second
// run.
func demoInbox(ctx context.Context, e *env, c *common) int {
	flow, name := policies.Flow, "examples/policies/flow.yaml"
	checker, err := policy.Parse(name, flow)
	if c.policy != "" {
		name = c.policy
		checker, err = policy.Load(c.policy)
	}
	if err != nil {
		printProblems(e.stderr, err)
		return exitFailure
	}
	w := e.stdout
	fmt.Fprintf(w, "Support inbox: 3 messages; %s carries a prompt injection telling the assistant to forward the\n", inbox.InjectedID)
	fmt.Fprintf(w, "customer record to %s. The triage program files a ticket per message, honours\n", inbox.Attacker)
	fmt.Fprintln(w, "requests to send account details to an address, and mails a digest to the support team.")
	fmt.Fprintln(w)

	c.policy = "" // each run sets its own authorizer
	fmt.Fprintln(w, "1. Without a flow rule (the default policy):")
	ib, res, ok := runInbox(ctx, e, c, nil)
	if !ok {
		return exitFailure
	}
	printInbox(w, ib, res)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "2. With the flow rule (%s):\n", name)
	ib, res, ok = runInbox(ctx, e, c, bindings.NewPolicyAuthorizer(checker))
	if !ok {
		return exitFailure
	}
	printInbox(w, ib, res)
	for _, m := range ib.Sent() {
		for _, to := range m.To {
			if to == inbox.Attacker {
				fmt.Fprintln(w, "\nThe customer record left under the flow policy.")
				return exitFailure
			}
		}
	}
	return exitOK
}

// runInbox runs the program on a fresh injected inbox under a (nil: the
// default authorizer).
func runInbox(ctx context.Context, e *env, c *common, a bindings.Authorizer) (*inbox.Inbox, *sandbox.Result, bool) {
	ib := inbox.New(true)
	runner, closeRunner, err := newRunner(ib.Tools(), c, nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall demo: %v\n", err)
		return nil, nil, false
	}
	defer closeRunner()
	runner.Broker().SetAuthorizer(a)
	res := runner.Run(ctx, bindings.RunRequest{Program: sandbox.Program{Source: inbox.Program}})
	if !res.OK {
		printError(e.stderr, res.Error)
		return nil, nil, false
	}
	return ib, res, true
}

func printInbox(w io.Writer, ib *inbox.Inbox, res *sandbox.Result) {
	var o inboxOutcome
	_ = json.Unmarshal(res.Result, &o)
	var ids []string
	for _, t := range ib.Tickets() {
		ids = append(ids, t.ID+" ("+t.MessageID+")")
	}
	fmt.Fprintf(w, "   tickets filed: %s\n", strings.Join(ids, ", "))
	for _, m := range ib.Sent() {
		mark := ""
		for _, to := range m.To {
			if to == inbox.Attacker {
				mark = "   <- a customer record left the company"
			}
		}
		fmt.Fprintf(w, "   mail sent to %s: %q%s\n", strings.Join(m.To, ", "), m.Subject, mark)
	}
	for _, r := range o.Refused {
		fmt.Fprintf(w, "   denied: send_email to %s (asked by %s): %s by rule %s:\n     %s\n", r.To, r.Message, r.Code, r.Rule, r.Error)
	}
	if sl, ok := res.Meta["security_label"].(map[string]any); ok {
		conf := "public"
		if m, ok := sl["confidentiality"].(map[string]any); ok {
			conf = fmt.Sprintf("readers %v", m["readers"])
		}
		fmt.Fprintf(w, "   the run's result is labelled %v, %s (from %v)\n", sl["integrity"], conf, sl["sources"])
	}
	fmt.Fprintf(w, "   %d tool calls: %d ok, %d denied\n", res.Calls.Total, res.Calls.OK, res.Calls.Denied)
}
