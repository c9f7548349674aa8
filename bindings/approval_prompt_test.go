package bindings

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestApprovalPromptShowsEveryArgument: the person is shown every
// argument's name in the order the call gave them; long values are cut one
// by one, each saying how much of it is shown, so that a padded argument
// cannot push another (to, amount) out of the prompt.
func TestApprovalPromptShowsEveryArgument(t *testing.T) {
	b, _ := approvalBroker(t, BrokerConfig{})
	var asked ApprovalRequest
	yes := ApproverFunc(func(_ context.Context, r ApprovalRequest) (bool, error) { asked = r; return true, nil })
	args := json.RawMessage(`{"memo":"` + strings.Repeat("x", 5000) + `","to":"attacker@evil.example","amount":5,` +
		`"cc":"` + strings.Repeat("y", 3000) + `","api_key":"hunter2hunter2","note":"short"}`)
	if _, err := b.Direct(context.Background(), DirectCall{Principal: Principal{ID: "alice"}, Tool: "pay", Args: args, Approver: yes}); err != nil {
		t.Fatal(err)
	}
	msg := asked.Message
	last := -1
	for _, want := range []string{`memo: "xxx`, `to: "attacker@evil.example"`, `amount: 5`, `cc: "yyy`, `api_key: "[REDACTED]"`, `note: "short"`} {
		i := strings.Index(msg, want)
		if i < 0 {
			t.Errorf("the prompt does not show %q:\n%s", want, msg)
			continue
		}
		if i < last {
			t.Errorf("%q is out of the call's order:\n%s", want, msg)
		}
		last = i
	}
	if strings.Contains(msg, "hunter2") {
		t.Errorf("the prompt shows a secret:\n%s", msg)
	}
	if strings.Count(msg, "of 5002 bytes") != 1 || strings.Count(msg, "of 3002 bytes") != 1 {
		t.Errorf("the prompt does not say what it cut of each long value:\n%s", msg)
	}
	if len(asked.ArgsSummary) > 2*MaxArgsSummaryBytes {
		t.Errorf("summary of %d bytes", len(asked.ArgsSummary))
	}
}
