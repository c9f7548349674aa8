package policy_test

import (
	"fmt"

	"github.com/sandcall/sandcall/policy"
)

func Example() {
	c, err := policy.Parse("payments.yaml", []byte(`
version: 1
rules:
  - name: expense-reads
    tools: ["get_*"]
    allowed_callers: [code]
  - name: payments
    tools: [send_payment]
    allowed_callers: [direct]
    when: 'args.amount <= 1000 && "finance" in principal.roles'
    message: payments over 1000 need a person
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	alice := policy.Principal{ID: "alice", Roles: []string{"finance"}}
	for _, req := range []policy.Request{
		{Caller: policy.Code, Tool: "get_expenses", Principal: alice},
		{Caller: policy.Direct, Tool: "get_expenses", Principal: alice},
		{Caller: policy.Direct, Tool: "send_payment", Args: []byte(`{"amount": 250}`), Principal: alice},
		{Caller: policy.Direct, Tool: "send_payment", Args: []byte(`{"amount": 5000}`), Principal: alice},
	} {
		d := c.Decide(&req)
		fmt.Printf("%s by %s: allow=%t rule=%s", req.Tool, req.Caller, d.Allow, d.Rule)
		if !d.Allow {
			fmt.Printf(" message=%q", d.Message)
		}
		fmt.Println()
	}
	fmt.Println(c.Exposes("get_expenses", policy.ToolMeta{ReadOnly: true}, policy.Direct, alice))

	_, err = policy.Parse("bad.yaml", []byte("version: 1\nrules:\n  - tools: [x]\n    when: 'args.amount <= limit'\n"))
	fmt.Println(err)
	// Output:
	// get_expenses by code: allow=true rule=expense-reads
	// get_expenses by direct: allow=false rule=expense-reads message="tool get_expenses may only be called from code"
	// send_payment by direct: allow=true rule=payments
	// send_payment by direct: allow=false rule=payments message="payments over 1000 need a person"
	// false
	// bad.yaml:4:27: rules[0]: when: unknown name limit
}
