package bindings

import (
	"context"
	"encoding/json"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// CallDirect performs a call made by the model through MCP (caller direct),
// with no way to ask a person: a call that needs an approval is denied. See
// Direct.
func (b *Broker) CallDirect(ctx context.Context, p Principal, name string, args json.RawMessage) (json.RawMessage, error) {
	return b.Direct(ctx, DirectCall{Principal: p, Tool: name, Args: args})
}

// DirectCall is one call made by the model through MCP.
type DirectCall struct {
	Principal Principal
	Tool      string
	Args      json.RawMessage
	// Approver asks a person when the policy requires an approval. If nil,
	// such calls are denied.
	Approver Approver
	// Suspend and Resume are the call's approval without a session (MCP
	// 2026-07-28), as for a run (RunRequest.Suspend, Replay): with Suspend,
	// a call that needs an approval is not made and DirectResult.Suspension
	// says what to ask; Resume carries the person's answer to that call
	// (Pending; Log is empty), which is made once if Approved and denied
	// otherwise.
	Suspend bool
	Resume  *Replay
}

// Direct performs a direct call (caller direct) through the broker's path.
// It is DirectOutcome without the notes.
func (b *Broker) Direct(ctx context.Context, c DirectCall) (json.RawMessage, error) {
	o, err := b.DirectOutcome(ctx, c)
	return o.Result, err
}

// DirectResult is a successful direct call: the result, and what the
// broker did to it that the caller should pass on to the model.
type DirectResult struct {
	// Result is the tool's result, cut by whole items if it was over the
	// output budget (never with in-band markers: see package doc).
	Result json.RawMessage
	// Notes are sentences for the model: the result was cut, or the tool
	// was called by a deprecated alias. Empty on most calls.
	Notes []string
	// Meta holds the same facts for machines (an MCP result's _meta):
	// "truncated": {"field", "kept", "omitted"} and "next_action". Nil on
	// most calls.
	Meta map[string]any
	// Suspension, with DirectCall.Suspend, is a call that waits for a
	// person's approval: it was not made, and Result is nil.
	Suspension *Suspension
}

// DirectOutcome performs a direct call (caller direct) through the broker's
// path: the same lookup (aliases included), validation, authorization,
// retries and output cut as a program's call.
func (b *Broker) DirectOutcome(ctx context.Context, c DirectCall) (DirectResult, error) {
	r := &run{b: b, principal: c.Principal, caller: tools.Direct, start: time.Now(), tier: "host",
		approver: c.Approver, limits: sandbox.Limits{MaxCalls: 1, MaxInFlight: 1}.Resolve()}
	r.init()
	if c.Suspend || c.Resume != nil { // replay.go
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		r.rp = newReplayState(c.Resume, c.Suspend, cancel)
	}
	res, err := r.Call(ctx, c.Tool, c.Args)
	if r.rp != nil {
		if s := r.rp.suspension(); s != nil {
			return DirectResult{Suspension: s}, nil
		}
	}
	if err != nil {
		return DirectResult{}, err
	}
	out := DirectResult{Result: res, Notes: r.notes, Meta: r.meta}
	return out, nil
}
