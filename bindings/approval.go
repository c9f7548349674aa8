package bindings

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// ApprovalRequest is what a person is asked to approve: one call, decided
// allowed by a policy rule that sets require_approval.
type ApprovalRequest struct {
	Tool      string
	Caller    string // "direct" or "code"
	Principal Principal
	RunID     string // empty for direct calls
	// ArgsSummary is the call's arguments for a person to read: one line
	// per top-level argument, in the call's order, "name: value" with the
	// value as compact JSON, secrets redacted (Redact), invisible and
	// bidirectional characters escaped (Visible); every name shown, the
	// values sharing MaxArgsSummaryBytes, each long one cut on its own
	// with how much is shown (argsummary.go).
	ArgsSummary string
	Rule        string // the policy rule that requires the approval
	// Plan is the plan of the program making the call (a code caller's),
	// or of the program a save_program call saves; nil otherwise.
	Plan *sandbox.Plan
	// Message is a one-paragraph question for the person, built from the
	// fields above.
	Message string
}

// MaxArgsSummaryBytes is what the values in ApprovalRequest.ArgsSummary
// share (the names and the cut notes come on top).
const MaxArgsSummaryBytes = 1 << 10

// Approver asks a person to approve a call and waits for the answer. The
// MCP layer supplies one bound to the client's session (MCP elicitation).
// Approve returns true only on an explicit approval; a decline or a
// dismissal is (false, nil); anything else is an error. The broker denies
// on false, on any error and when ctx ends (the approval timeout).
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (bool, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req ApprovalRequest) (bool, error)

// Approve implements Approver.
func (f ApproverFunc) Approve(ctx context.Context, req ApprovalRequest) (bool, error) {
	return f(ctx, req)
}

// ErrApprovalUnsupported is returned by an Approver that cannot reach a
// person: the MCP client does not support elicitation.
var ErrApprovalUnsupported = errors.New("the client cannot ask a person for approval")

// timedOut wraps the E_TOOL_DENIED error of an approval that nobody gave
// or refused within the approval timeout, so that the call is audited as
// "approval_timeout", not "declined"; the broker unwraps it.
type timedOut struct{ error }

// approve asks the run's Approver about an allowed call whose rule requires
// approval. It returns nil on an approval and an E_TOOL_DENIED error on a
// decline, a dismissal, an error, a time-out, or when nobody can be asked.
func (r *run) approve(ctx context.Context, info *CallInfo, d Decision) error {
	name := info.Tool.Name
	deny := func(msg, hint string) error {
		return &sandbox.Error{Code: sandbox.EToolDenied, Tool: name, Rule: d.Rule,
			Message: sandbox.Cap(msg, sandbox.MaxMessageBytes), Hint: hint}
	}
	if r.approver == nil {
		return deny("tool "+name+" needs a person's approval for each call, and nobody can be asked here",
			"Ask the user to make this call from an MCP client that supports elicitation.")
	}
	req := approvalRequest(info, d)
	// The person's time is not the run's: the run's wall clock stops while
	// it waits (sandbox.HoldWall), and approval_timeout bounds the wait.
	release := sandbox.HoldWall(ctx)
	actx, cancel := context.WithTimeout(ctx, r.b.cfg.ApprovalTimeout)
	t0 := time.Now()
	ok, err := safeApprove(actx, r.approver, req)
	late := actx.Err() != nil
	cancel()
	release()
	traceApproval(ctx, t0, ok, err, late)
	switch {
	case errors.Is(err, ErrApprovalUnsupported):
		return deny("tool "+name+" needs a person's approval for each call",
			"This tool needs a person's approval and your MCP client does not support elicitation; "+
				"use a client that does, or ask the operator to lift require_approval for it.")
	case ctx.Err() != nil:
		return sandbox.AsError(ctx.Err(), sandbox.ECancelled)
	case late:
		return timedOut{deny(fmt.Sprintf("nobody approved the call to %s within %s", name, r.b.cfg.ApprovalTimeout),
			"Ask the user to watch for the approval prompt, then try again.")}
	case err != nil:
		r.b.cfg.Logger.Warn("approval failed; denying", "tool", name, "err", err.Error())
		return deny("the approval of the call to "+name+" could not be obtained", "Try again, or ask the user to make this call.")
	case !ok:
		return deny("the user declined the call to "+name, "Do not retry this call unless the user asks for it.")
	}
	return nil
}

// approvalRequest is what a person is asked about the call.
func approvalRequest(info *CallInfo, d Decision) ApprovalRequest {
	name := info.Tool.Name
	req := ApprovalRequest{Tool: name, Caller: string(info.Caller), Principal: info.Principal,
		RunID: info.RunID, ArgsSummary: argsSummary(info.Args), Rule: d.Rule}
	who := info.Principal.ID
	if who == "" {
		who = "unknown"
	}
	from := "the model, directly"
	if info.Caller == tools.Code {
		from = "a program (run " + info.RunID + ")"
	}
	req.Message = fmt.Sprintf("Allow a call to %s for %s, made by %s?\nArguments:\n%s\n(policy rule %q requires approval)",
		name, who, from, req.ArgsSummary, d.Rule)
	if d.Flow != "" {
		req.Message += "\nThe program has read data from: " + sandbox.Cap(d.Flow, 1024)
	}
	planApproval(&req, info) // plan.go
	return req
}

// safeApprove calls a.Approve, turning a panic into an error.
func safeApprove(ctx context.Context, a Approver, req ApprovalRequest) (ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			ok, err = false, fmt.Errorf("approver panicked: %v", p)
		}
	}()
	return a.Approve(ctx, req)
}
