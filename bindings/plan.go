package bindings

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/plan"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/programs"
)

// Plans (docs/programs.md). Before a program runs, the broker reads its
// plan (sandbox/plan: the tools its text names) and, when the policy has
// plan rules, asks them about it: a refused program makes no call. The
// plan the rules see names, beside the program's own tools, the tools of
// every saved program among them (transitively, as deep as programs may
// nest). A call whose tool the plan did not list (a name computed at run
// time) is checked against the plan rules again, with that tool added,
// before the policy decides the call itself: dynamic names cannot get
// round a plan rule. run_code's result carries the plan, and an approval
// prompt shows it.

// planAuthorizer is implemented by Authorizers with plan rules
// (PolicyAuthorizer, from the policy's plans section).
type planAuthorizer interface {
	HasPlanRules() bool
	AuthorizePlan(ctx context.Context, req *policy.PlanRequest) Decision
}

// HasPlanRules reports whether the policy has plan rules.
func (a *PolicyAuthorizer) HasPlanRules() bool { return a.checker.HasPlanRules() }

// AuthorizePlan decides whether a program may run, from its plan.
func (a *PolicyAuthorizer) AuthorizePlan(_ context.Context, req *policy.PlanRequest) Decision {
	return a.checker.DecidePlan(req)
}

// runPlan is a run's plan and, when the policy has plan rules, the names
// they have approved so far.
type runPlan struct {
	plan sandbox.Plan

	mu    sync.Mutex
	rules planAuthorizer // nil: no plan rules were in force when the run started
	req   policy.PlanRequest
	names map[string]bool // the tools the rules have seen
}

// planRun reads the plan of prog, run for p by caller (program names a
// saved program; empty for run_code), and asks the plan rules about it.
// A plan that cannot be read is no plan (the engine reports a program
// that does not parse), unless plan rules are in force: they refuse what
// they cannot read.
func (b *Broker) planRun(ctx context.Context, prog sandbox.Program, p Principal, caller tools.Caller, program string) (*runPlan, *sandbox.Error) {
	var known []string
	if prog.Language == sandbox.WASM {
		for _, t := range b.Exposed(tools.Code, p) {
			known = append(known, t.Name)
		}
	}
	pl, perr := plan.Of(prog, known)
	pa, _ := b.authorizer().(planAuthorizer)
	if pa != nil && !pa.HasPlanRules() {
		pa = nil
	}
	if perr != nil {
		if pa != nil && perr.Code == sandbox.EInternal {
			return nil, &sandbox.Error{Code: sandbox.EToolDenied, Rule: "plan.unreadable",
				Message: "the policy checks programs' plans, and this program's plan could not be read, so it does not run",
				Hint:    "Name tools plainly (tools.<name>(args)) and run the program again."}
		}
		return nil, nil
	}
	rp := &runPlan{plan: pl, rules: pa}
	if pa == nil {
		return rp, nil
	}
	lang := string(prog.Language)
	if lang == "" {
		lang = string(sandbox.JavaScript)
	}
	rp.req = policy.PlanRequest{Caller: string(caller), Principal: p, Program: program, Language: lang,
		Dynamic: pl.Dynamic, Imports: pl.Imports}
	rp.names = map[string]bool{}
	for _, n := range b.expandNames(pl.Names(), p) {
		rp.names[n] = true
	}
	rp.req.Tools = sortedSet(rp.names)
	d := b.authorizePlan(ctx, pa, &rp.req)
	if !d.Allow {
		return rp, &sandbox.Error{Code: sandbox.EToolDenied, Rule: d.Rule, Reason: sandbox.ReasonDenied,
			Message: sandbox.Cap("the policy refuses this program before it runs: "+d.Message, sandbox.MaxMessageBytes),
			Hint:    d.Hint}
	}
	return rp, nil
}

// authorizePlan asks pa; a panic refuses.
func (b *Broker) authorizePlan(ctx context.Context, pa planAuthorizer, req *policy.PlanRequest) (d Decision) {
	defer func() {
		if p := recover(); p != nil {
			b.cfg.Logger.Error("plan authorizer panicked; refusing", "panic", fmt.Sprint(p))
			d = Decision{Rule: "authorizer.panic", Message: "the policy could not evaluate the program's plan"}
		}
	}()
	return pa.AuthorizePlan(ctx, req)
}

// checkCall asks the plan rules again about a call of t that the plan did
// not list: the plan with t (and the tools t names, when it is a saved
// program) added. The names are kept once allowed.
func (rp *runPlan) checkCall(ctx context.Context, b *Broker, t *tools.Tool, p Principal) *sandbox.Error {
	if rp == nil || rp.rules == nil {
		return nil
	}
	rp.mu.Lock()
	if rp.names[t.Name] {
		rp.mu.Unlock()
		return nil
	}
	next := map[string]bool{}
	for n := range rp.names {
		next[n] = true
	}
	for _, n := range b.expandNames([]string{t.Name}, p) {
		next[n] = true
	}
	req := rp.req
	req.Tools = sortedSet(next)
	rp.mu.Unlock()
	d := b.authorizePlan(ctx, rp.rules, &req)
	if !d.Allow {
		return &sandbox.Error{Code: sandbox.EToolDenied, Tool: t.Name, Rule: d.Rule, Reason: sandbox.ReasonDenied,
			Message: sandbox.Cap("the program's plan did not name "+t.Name+", and a program that calls it "+
				"is one the policy refuses: "+d.Message, sandbox.MaxMessageBytes),
			Hint: d.Hint}
	}
	rp.mu.Lock()
	for n := range next {
		rp.names[n] = true
	}
	rp.mu.Unlock()
	return nil
}

// shown is the plan to show with the run (nil when it could not be read).
func (rp *runPlan) shown() *sandbox.Plan {
	if rp == nil {
		return nil
	}
	p := rp.plan
	return &p
}

// expandNames returns names with, for each saved or file program among
// them that p may call, the tools that program names, transitively (as
// deep as programs nest), sorted.
func (b *Broker) expandNames(names []string, p Principal) []string {
	seen := map[string]bool{}
	level := names
	for depth := 0; len(level) > 0 && depth <= b.maxDepth(); depth++ {
		var next []string
		for _, n := range level {
			if seen[n] {
				continue
			}
			seen[n] = true
			t, _, ok := b.cfg.Catalog.Resolve(n)
			if !ok {
				continue
			}
			if prog, ok := b.cfg.Programs.Of(t); ok && prog.VisibleTo(p.ID) {
				next = append(next, prog.Plan.Names()...)
			}
		}
		level = next
	}
	for _, n := range level { // the deepest level is named, not opened
		seen[n] = true
	}
	return sortedSet(seen)
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// planApproval adds the plan to an approval request: the calling
// program's, or that of the program a save_program call saves.
func planApproval(req *ApprovalRequest, info *CallInfo) {
	if info.Tool.Name == programs.SaveToolName {
		if name, version, pl, ok := programs.PlanOfSave(info.Args); ok {
			req.Plan = &pl
			req.Message += fmt.Sprintf("\nIt saves the program %s (version %s) as a tool that runs later with its caller's rights. %s",
				safeName(name), version, PlanSentence(&pl))
		}
		return
	}
	if info.Caller == tools.Code && info.Plan != nil {
		req.Plan = info.Plan
		req.Message += "\nThe program's plan: " + PlanSentence(info.Plan)
	}
}

// PlanSentence describes a plan for a person: "It names get_expenses (line
// 3) and send_email (line 9); 1 tool name is computed at run time."
func PlanSentence(p *sandbox.Plan) string {
	if p == nil {
		return "Its plan could not be read."
	}
	var b strings.Builder
	if len(p.Tools) == 0 {
		b.WriteString("It names no tool")
	} else {
		b.WriteString("It names ")
		for i, t := range p.Tools {
			if i == 20 {
				fmt.Fprintf(&b, " and %d more", len(p.Tools)-i)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(safeName(t.Name))
			if t.Line > 0 {
				fmt.Fprintf(&b, " (line %d)", t.Line)
			}
		}
	}
	switch p.Dynamic {
	case 0:
		b.WriteString(".")
	case 1:
		b.WriteString("; 1 tool name is computed at run time.")
	default:
		fmt.Fprintf(&b, "; %d tool names are computed at run time.", p.Dynamic)
	}
	return b.String()
}

// CheckPlan reads the plan of prog as a run of p would, and asks the
// policy's plan rules about it (through the programs it names), without
// running it: `sandcall plan --policy` answers what serve decides. The
// plan is nil when it cannot be read; the error is the refusal
// (E_TOOL_DENIED, naming the rule), or nil.
func (b *Broker) CheckPlan(ctx context.Context, prog sandbox.Program, p Principal) (*sandbox.Plan, *sandbox.Error) {
	rp, err := b.planRun(ctx, prog, p, tools.Code, "")
	return rp.shown(), err
}
