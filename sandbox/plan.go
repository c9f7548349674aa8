package sandbox

import (
	"context"
	"encoding/json"
)

// Plan is what a program will call, read from its text before it runs
// (package sandbox/plan extracts it): the tools it names, and how many
// names it computes at run time. The host shows it in run_code's result
// and in approval prompts, and a policy can refuse a program from it
// before it makes any call (docs/programs.md).
//
// A plan over-approximates what it can read (a name on a branch never
// taken is listed) and counts what it cannot (Dynamic): a name computed at
// run time can be any tool, so the host checks each call whose name the
// plan did not list against the plan rules again, at the call.
type Plan struct {
	// Tools are the tools the program names, each once, at the first line
	// that names it, in the order of those lines. Never nil.
	Tools []PlanTool `json:"tools"`
	// Dynamic counts the places where the program names a tool the plan
	// cannot read: a computed name (tools[name], tools.call(name, …)), or
	// the tools object used as a value (passed, aliased, enumerated). A
	// WebAssembly module that imports a call function counts 1: its names
	// are data.
	Dynamic int `json:"dynamic"`
	// Imports are a WebAssembly module's imports, "module.name" (empty for
	// JavaScript and TypeScript).
	Imports []string `json:"imports,omitempty"`
}

// PlanTool is one tool a plan names.
type PlanTool struct {
	Name string `json:"name"`
	// Line is the 1-based line of the submitted source where the program
	// first names the tool; 0 for a WebAssembly module.
	Line int `json:"line,omitempty"`
}

// Names returns the names of the plan's tools.
func (p *Plan) Names() []string {
	if p == nil {
		return nil
	}
	out := make([]string, len(p.Tools))
	for i, t := range p.Tools {
		out[i] = t.Name
	}
	return out
}

// PlanCall is the call an engine makes, when Job.SendPlan is set, to hand
// the host the plan of the program it is about to run: Host.Call(ctx,
// PlanCall, <the Plan's JSON>), before any guest code runs. The host may
// refuse the program with an E_TOOL_DENIED error, which the engine returns
// as the run's error without running it; any other answer lets it run.
// The plan is read where the program is parsed (in the process tier, in
// the worker): the host never parses a program itself. Lines are the
// submitted source's; PlanTool.Col is not sent.
const PlanCall = "$plan"

// SendPlan hands p to host as PlanCall and returns the refusal, if the
// host refuses the program (E_TOOL_DENIED), or the context's error; any
// other answer (a host that does not know the call) is no refusal.
func SendPlan(ctx context.Context, host Host, p Plan) *Error {
	b, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	_, cerr := host.Call(ctx, PlanCall, b)
	if cerr == nil {
		return nil
	}
	e := AsError(cerr, EToolFailed)
	switch e.Code {
	case EToolDenied, ECancelled, ETimeout:
		return e
	}
	return nil
}

// Names guests call for program state (docs/guest-api.md): engines route
// them to Host.Call like any tool call, and the host answers them from its
// state store; they reach no tool. Arguments and results are JSON:
//
//	$state.get    {"key"}                      → the value, or null when unset
//	$state.set    {"key", "value", "ttl_s"?}   → null
//	$state.delete {"key"}                      → true if the key was there
//	$state.keys   {"prefix"?}                  → ["key", …], sorted
const (
	StateGet    = "$state.get"
	StateSet    = "$state.set"
	StateDelete = "$state.delete"
	StateKeys   = "$state.keys"
)
