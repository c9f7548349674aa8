package bindings_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// A run that needs a person's approval suspends (no session to wait on)
// and is resumed by replay: the call made before the approval is answered
// from the log, not made again.
func ExampleRunner_RunResumable() {
	made := 0
	note := &tools.Tool{Name: "note", Description: "Writes a note.",
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			made++
			return json.RawMessage(fmt.Sprint(made)), nil
		}}
	pay := &tools.Tool{Name: "pay", Description: "Pays.",
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`"paid"`), nil
		}}
	catalog, _ := tools.NewCatalog(note, pay)
	pol, _ := policy.Parse("p.yaml", []byte("version: 1\nrules:\n  - {name: ask, tools: [pay], require_approval: true}\n  - {name: notes, tools: [note]}\n"))
	broker, _ := bindings.NewBroker(bindings.BrokerConfig{Catalog: catalog, Authorizer: bindings.NewPolicyAuthorizer(pol)})
	runner, _ := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{})})

	req := bindings.RunRequest{Program: sandbox.Program{Source: `const n = await tools.note({}); return [n, await tools.pay({})]`},
		Suspend: true, Seed: 1}
	_, susp := runner.RunResumable(context.Background(), req)
	fmt.Println("asks:", susp.Pending.Tool, "after", len(susp.Log), "call(s)")

	req.Replay = &bindings.Replay{Log: susp.Log, Pending: susp.Pending, Approved: true}
	res, _ := runner.RunResumable(context.Background(), req)
	fmt.Println(string(res.Result), "notes written:", made)
	// Output:
	// asks: pay after 1 call(s)
	// [1,"paid"] notes written: 1
}

// A direct call that needs a person's approval, without a session: the
// broker does not make it and says what to ask (DirectResult.Suspension);
// the answer, sent back with the pending call, makes it once.
func ExampleBroker_DirectOutcome_suspend() {
	paid := 0
	pay := &tools.Tool{Name: "pay", Description: "Pays.",
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			paid++
			return json.RawMessage(`"paid"`), nil
		}}
	catalog, _ := tools.NewCatalog(pay)
	pol, _ := policy.Parse("p.yaml", []byte("version: 1\nrules:\n  - {name: ask, tools: [pay], require_approval: true}\n"))
	broker, _ := bindings.NewBroker(bindings.BrokerConfig{Catalog: catalog, Authorizer: bindings.NewPolicyAuthorizer(pol)})

	call := bindings.DirectCall{Principal: bindings.LocalPrincipal, Tool: "pay", Args: json.RawMessage(`{}`), Suspend: true}
	out, err := broker.DirectOutcome(context.Background(), call)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("asks about:", out.Suspension.Pending.Tool, string(out.Suspension.Pending.Args), "paid:", paid)

	call.Suspend = false
	call.Resume = &bindings.Replay{Pending: out.Suspension.Pending, Approved: true}
	out, _ = broker.DirectOutcome(context.Background(), call)
	fmt.Println(string(out.Result), "paid:", paid)
	// Output:
	// asks about: pay {} paid: 0
	// "paid" paid: 1
}
