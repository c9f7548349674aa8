package bindings

import (
	"context"
	"encoding/json"
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
	mu       sync.Mutex
	plan     sandbox.Plan
	has      bool           // plan is set
	awaiting bool           // the engine may still hand the plan (sandbox.PlanCall)
	rules    planAuthorizer // nil: no plan rules were in force when the run started
	req      policy.PlanRequest
	names    map[string]bool // the tools the rules have seen
}

// planRun prepares the plan of prog, run for p by caller (program names a
// program tool; empty for run_code). A JavaScript or TypeScript program's
// plan is read where it is parsed — by its engine, in the worker in the
// process tier — and handed over before it runs (sandbox.PlanCall,
// receivePlan): the server never parses a program, TypeScript's esbuild
// least of all. A WebAssembly module's plan (its imports and data) is read
// here. When plan rules are in force, every call whose tool the plan did
// not name is asked about at the call, plan or no plan (checkCall).
func (b *Broker) planRun(ctx context.Context, prog sandbox.Program, p Principal, caller tools.Caller, program string) (*runPlan, *sandbox.Error) {
	rp := &runPlan{awaiting: true}
	if pa, _ := b.authorizer().(planAuthorizer); pa != nil && pa.HasPlanRules() {
		lang := string(prog.Language)
		if lang == "" {
			lang = string(sandbox.JavaScript)
		}
		rp.rules = pa
		rp.req = policy.PlanRequest{Caller: string(caller), Principal: p, Program: program, Language: lang}
		rp.names = map[string]bool{}
	}
	if prog.Language != sandbox.WASM {
		return rp, nil
	}
	rp.awaiting = false
	var known []string
	for _, t := range b.Exposed(tools.Code, p) {
		known = append(known, t.Name)
	}
	pl, perr := plan.Of(prog, known)
	if perr != nil {
		return rp, nil // the engine reports a module it cannot load
	}
	return rp, rp.set(ctx, b, p, pl)
}

// set records the program's plan and, with plan rules, asks them about it:
// the refusal, if they refuse it.
func (rp *runPlan) set(ctx context.Context, b *Broker, p Principal, pl sandbox.Plan) *sandbox.Error {
	rp.mu.Lock()
	rp.plan, rp.has = pl, true
	if rp.rules == nil {
		rp.mu.Unlock()
		return nil
	}
	for _, n := range b.expandNames(pl.Names(), p) {
		rp.names[n] = true
	}
	rp.req.Tools = sortedSet(rp.names)
	rp.req.Dynamic, rp.req.Imports = pl.Dynamic, pl.Imports
	req := rp.req
	rp.mu.Unlock()
	d := b.authorizePlan(ctx, rp.rules, &req)
	if !d.Allow {
		return &sandbox.Error{Code: sandbox.EToolDenied, Rule: d.Rule, Reason: sandbox.ReasonDenied,
			Message: sandbox.Cap("the policy refuses this program before it runs: "+d.Message, sandbox.MaxMessageBytes),
			Hint:    d.Hint}
	}
	return nil
}

// receivePlan is the sandbox.PlanCall an engine makes before the program
// runs: the first one, before any call, sets the run's plan (and the plan
// rules may refuse it); any other is ignored. The plan comes from the
// engine (the worker, in the process tier): it decides what is shown and
// what is refused up front, never what is allowed — a name it leaves out
// is asked about at its call.
func (r *run) receivePlan(ctx context.Context, args json.RawMessage) (json.RawMessage, *sandbox.Error) {
	rp := r.plan
	if rp == nil || r.caller != tools.Code {
		return json.RawMessage("null"), nil
	}
	rp.mu.Lock()
	first := rp.awaiting && r.seq.Load() == 0
	rp.awaiting = false
	rp.mu.Unlock()
	var pl sandbox.Plan
	if !first || len(args) > maxPlanBytes || json.Unmarshal(args, &pl) != nil {
		return json.RawMessage("null"), nil
	}
	if len(pl.Tools) > maxPlanTools {
		pl.Dynamic += len(pl.Tools) - maxPlanTools
		pl.Tools = pl.Tools[:maxPlanTools]
	}
	for i := range pl.Tools {
		pl.Tools[i].Name = sandbox.Cap(pl.Tools[i].Name, 256)
	}
	if pl.Tools == nil {
		pl.Tools = []sandbox.PlanTool{}
	}
	if e := rp.set(ctx, r.b, r.principal, pl); e != nil {
		return nil, e
	}
	return json.RawMessage("null"), nil
}

// Bounds of a plan an engine hands over.
const (
	maxPlanBytes = 1 << 20
	maxPlanTools = 1000
)

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
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if !rp.has {
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
		} else {
			req.Message += "\nIts program's plan could not be read (it is not JavaScript that parses): the save will fail."
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
	if err != nil || prog.Language == sandbox.WASM {
		return rp.shown(), err
	}
	pl, perr := plan.Of(prog, nil) // the command line plans the operator's own file
	if perr != nil {
		return nil, nil
	}
	err = rp.set(ctx, b, p, pl)
	return rp.shown(), err
}
