package bindings

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/programs"
)

// Programs as tools (docs/programs.md). A program tool's call runs the
// program in the sandbox as its caller: its calls are authorized for the
// caller's principal, as a program's (caller code) — never with more rights
// than a program of that principal has, whoever called it — and the label
// of what it read joins the calling run's. It starts with the label the
// caller's call carried (its arguments may hold what the caller read).
// Programs call programs at most BrokerConfig.MaxProgramDepth deep.

var _ programs.Runner = (*Runner)(nil)

// callTree counts the calls of a run and of every program tool it runs,
// at any depth, against the run's call limit: programs calling programs
// cannot multiply it.
type callTree struct {
	n   atomic.Int64
	max int64
}

func newCallTree(max int) *callTree { return &callTree{max: int64(max)} }

// take counts one call and reports whether it is within the limit; a nil
// tree counts nothing.
func (t *callTree) take() bool { return t == nil || t.n.Add(1) <= t.max }

// PrincipalID implements what tools/programs reads of a call: who it is
// made for.
func (c *CallInfo) PrincipalID() string { return c.Principal.ID }

// maxDepth is how deep programs may nest.
func (b *Broker) maxDepth() int {
	if b.cfg.MaxProgramDepth > 0 {
		return b.cfg.MaxProgramDepth
	}
	return programs.DefaultMaxDepth
}

// visible reports whether p may see t: a saved program is its owner's.
func (b *Broker) visible(t *tools.Tool, p Principal) bool {
	if prog, ok := b.cfg.Programs.Of(t); ok {
		return prog.VisibleTo(p.ID)
	}
	return true
}

// hiddenTool is the error of a call to another principal's saved program:
// the same as for a name no tool has.
func (b *Broker) hiddenTool(name string, caller tools.Caller, p Principal) *sandbox.Error {
	e := unknownTool(name)
	e.Hint = b.unknownHintFor(name, caller, p)
	return e
}

// boundNames are the names a program of p is bound: the tools exposed to
// code, and their deprecated aliases (bound, never listed, so a program
// written against an old name keeps working through its window).
func (b *Broker) boundNames(p Principal) []string {
	bound := b.Exposed(tools.Code, p)
	names := make([]string, 0, len(bound))
	for _, t := range bound {
		names = append(names, t.Name)
	}
	for _, t := range bound {
		for _, a := range t.Aliases {
			names = append(names, a.Name)
		}
	}
	return names
}

// RunProgram implements programs.Runner: it runs p for the call whose
// handler received ctx (the broker's CallInfo is on it).
func (r *Runner) RunProgram(ctx context.Context, p *programs.Program, args json.RawMessage) (json.RawMessage, error) {
	info, ok := CallInfoFrom(ctx)
	if !ok || info.run == nil {
		return nil, tools.ToolError(sandbox.EInternal, "program "+p.Name+" was called outside the broker", "")
	}
	parent := info.run
	b := r.broker
	depth := parent.depth + 1
	if depth > b.maxDepth() {
		return nil, &sandbox.Error{Code: sandbox.EToolCallLimit, Tool: p.Name,
			Message: fmt.Sprintf("programs may call programs at most %d deep; %s would run at depth %d", b.maxDepth(), p.Name, depth),
			Hint:    "Call the tools the inner program calls directly, or split the work into separate runs."}
	}
	prog := sandbox.Program{Language: p.Language, Source: p.Source, Input: args}
	start := time.Now()
	lim := r.limits
	if dl, ok := ctx.Deadline(); ok {
		lim.Timeout = min(lim.Timeout, max(time.Until(dl), time.Millisecond))
	}
	tree := parent.tree
	if tree == nil { // a direct call: the program's calls count from here
		tree = newCallTree(lim.MaxCalls)
	}
	h := &runHost{run: &run{b: b, id: newRunID(), principal: info.Principal, caller: tools.Code, limits: lim,
		start: start, approver: parent.approver, tier: r.tier, depth: depth, tree: tree}}
	h.init()
	// What the caller's call carried (the caller's run, the handles among
	// the arguments) is what the program starts from.
	for _, s := range append(append([]policy.Source(nil), info.Flow...), info.ArgFlow...) {
		h.flow.join(s.Label, s)
	}
	h.flow.join(info.Label.Join(info.ArgLabel), policy.Source{Tool: p.Name + " (arguments)", Seq: info.Seq})
	rp, refused := b.planRun(ctx, prog, info.Principal, parent.caller, p.Name)
	h.plan = rp
	var out *sandbox.Outcome
	if refused != nil {
		refused.Tool = p.Name
		out = &sandbox.Outcome{Err: refused}
	} else {
		job := &sandbox.Job{RunID: h.id, Program: prog, Limits: lim, Tools: b.boundNames(info.Principal),
			Principal: info.Principal.ID, SendPlan: true}
		out = r.progExec.Execute(ctx, job, h)
		if out == nil {
			out = &sandbox.Outcome{Err: sandbox.Errorf(sandbox.EInternal, "", "the engine returned no outcome")}
		}
	}
	label, sources := h.Label()
	if parent.caller == tools.Code {
		parent.flow.join(label, policy.Source{Tool: p.Name, Seq: info.Seq, Label: label})
	} else if !label.IsZero() {
		parent.setMeta("security_label", LabelMeta(label, sources)["security_label"])
	}
	r.auditProgram(h, p, parent, out, start, label)
	if out.Err != nil {
		return nil, programError(p.Name, redactError(out.Err))
	}
	return out.Value, nil
}

// programError is the error a program's caller sees: a tool error (denied,
// arguments, unknown tool, call limit, failed) as it is, anything else as
// E_TOOL_FAILED naming the program and the code.
func programError(name string, e *sandbox.Error) *sandbox.Error {
	switch e.Code {
	case sandbox.EToolDenied, sandbox.EToolArgs, sandbox.EToolUnknown, sandbox.EToolCallLimit, sandbox.EToolFailed, sandbox.EInternal:
		c := *e
		if c.Tool == "" {
			c.Tool = name
		}
		return &c
	case sandbox.ECancelled:
		return e
	}
	return &sandbox.Error{Code: sandbox.EToolFailed, Tool: name,
		Message: sandbox.Cap(fmt.Sprintf("program %s failed: %s", name, e.Error()), sandbox.MaxMessageBytes),
		Hint:    "Check the arguments against the program's parameters; if they are right, the program itself failed: report it."}
}

// auditProgram records a program's run, under the call that ran it.
func (r *Runner) auditProgram(h *runHost, p *programs.Program, parent *run, out *sandbox.Outcome, start time.Time, label policy.Label) {
	d := time.Since(start)
	code, decision := "", "ok"
	if out.Err != nil {
		code, decision = string(out.Err.Code), "error"
	}
	if o := r.broker.cfg.Observer; o != nil {
		o.ObserveRun(decision, code, d)
	}
	a := r.broker.cfg.Audit
	if !a.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	rule := ""
	if out.Err != nil {
		rule = out.Err.Rule
	}
	a.LogAttrs(context.Background(), slog.LevelInfo, "run",
		slog.String("run_id", h.id),
		slog.Int("seq", 0),
		slog.String("caller", string(tools.Code)),
		slog.String("principal", h.principal.ID),
		slog.String("tool", p.Name),
		slog.String("decision", decision),
		slog.String("rule", rule),
		slog.String("code", code),
		slog.Float64("duration_ms", ms(d)),
		slog.Int("calls", h.snapshot().Total),
		slog.String("tier", r.tier),
		slog.String("label", label.String()),
		slog.String("program_version", p.Version()),
		slog.String("parent_run", parent.id),
		slog.Int("depth", h.depth))
}
