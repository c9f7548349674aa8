package policy

import (
	"fmt"
	"strings"
	"testing"
)

// policy50 is a 50-rule policy whose last rule decides the benchmarked call
// (the worst case: every rule before it is tried), with a condition over
// the arguments, the principal and the run.
func policy50() string {
	var b strings.Builder
	b.WriteString("version: 1\nrules:\n")
	for i := 0; i < 24; i++ {
		fmt.Fprintf(&b, "  - tools: [tool_%d, other_%d]\n    allowed_callers: [code]\n", i, i)
		fmt.Fprintf(&b, "  - tools: [\"family%d_*\"]\n    when: 'run.calls_by_tool[tool] < 20'\n", i)
	}
	b.WriteString("  - match: {destructive: true}\n    allowed_callers: [direct]\n")
	b.WriteString("  - tools: [send_payment]\n    when: 'args.amount <= 1000 && \"finance\" in principal.roles'\n    rate: {calls: 1000000, per: 1s}\n")
	return b.String()
}

func BenchmarkDecide50Rules(b *testing.B) {
	c := mustParse(b, policy50())
	if n := len(c.rules); n != 50 {
		b.Fatalf("%d rules", n)
	}
	req := &Request{Caller: Direct, Tool: "send_payment", Args: []byte(`{"amount": 250, "to": "ACME-42", "memo": "invoice 7"}`),
		Principal: Principal{ID: "alice", Roles: []string{"finance"}}}
	if d := c.Decide(req); !d.Allow || d.Rule != "rules[49]" {
		b.Fatalf("%+v", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !c.Decide(req).Allow {
			b.Fatal("denied")
		}
	}
}

// BenchmarkDecide50RulesNoArgs: the deciding rule's condition does not read
// the arguments (the common case of a quota-style condition).
func BenchmarkDecide50RulesNoArgs(b *testing.B) {
	c := mustParse(b, policy50())
	req := &Request{Caller: Code, Tool: "family23_issues", Args: []byte(`{"repo": "x"}`),
		Run: Run{CallsByTool: map[string]int{"family23_issues": 3}}}
	if d := c.Decide(req); !d.Allow || d.Rule != "rules[47]" {
		b.Fatalf("%+v", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.Decide(req)
	}
}

func BenchmarkDecideDefault(b *testing.B) {
	c := Default()
	req := &Request{Caller: Code, Tool: "get_expenses"}
	b.ReportAllocs()
	for b.Loop() {
		c.Decide(req)
	}
}

func BenchmarkDecide50RulesParallel(b *testing.B) {
	c := mustParse(b, policy50())
	req := &Request{Caller: Direct, Tool: "send_payment", Args: []byte(`{"amount": 250}`),
		Principal: Principal{ID: "alice", Roles: []string{"finance"}}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Decide(req)
		}
	})
}

func BenchmarkParse50Rules(b *testing.B) {
	src := []byte(policy50())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("p.yaml", src); err != nil {
			b.Fatal(err)
		}
	}
}
