package policy_test

import (
	"fmt"

	"github.com/sandcall/sandcall/policy"
)

// A flow rule: mail may go only to readers of everything the run has read.
// The run read an untrusted inbox and a customer record for the support
// team; a send to an outside address is denied, naming the flow.
func ExampleLabel() {
	c, err := policy.Parse("flow.yaml", []byte(`version: 1
labels:
  - {tools: [list_messages], integrity: untrusted}
  - {tools: [get_customer], readers: [support@acme.example]}
rules:
  - name: no-exfiltration
    tools: [send_email]
    when: 'label.public || all(args.to, # in label.readers)'
`))
	if err != nil {
		panic(err)
	}
	var run policy.Run
	for i, tool := range []string{"list_messages", "get_customer"} {
		l, _ := c.SourceLabel(tool, policy.ToolMeta{})
		run.Label = run.Label.Join(l)
		run.Flow = append(run.Flow, policy.Source{Tool: tool, Seq: i + 1, Label: l})
	}
	fmt.Println("run label:", run.Label)
	for _, to := range []string{"support@acme.example", "archive@exfil.example"} {
		d := c.Decide(&policy.Request{Caller: policy.Code, Tool: "send_email", Run: run,
			Args: []byte(`{"to":["` + to + `"]}`)})
		if d.Allow {
			fmt.Println(to, "allowed")
		} else {
			fmt.Println(to, "denied:", d.Flow)
		}
	}
	// Output:
	// run label: untrusted, readers [support@acme.example]
	// support@acme.example allowed
	// archive@exfil.example denied: list_messages (call 1, untrusted), get_customer (call 2, readers [support@acme.example])
}
