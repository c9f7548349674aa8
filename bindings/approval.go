package bindings

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/sandcall/sandcall/sandbox"
)

// ApprovalRequest is what a person is asked to approve: one call, decided
// allowed by a policy rule that sets require_approval.
type ApprovalRequest struct {
	Tool      string
	Caller    string // "direct" or "code"
	Principal Principal
	RunID     string // empty for direct calls
	// ArgsSummary is the call's arguments as compact JSON, secrets redacted
	// (Redact), invisible and bidirectional characters escaped (Visible),
	// capped at MaxArgsSummaryBytes.
	ArgsSummary string
	Rule        string // the policy rule that requires the approval
	// Message is a one-paragraph question for the person, built from the
	// fields above.
	Message string
}

// MaxArgsSummaryBytes caps ApprovalRequest.ArgsSummary.
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

// argsSummary is the redacted, capped JSON of args for a person to read,
// with invisible and direction-changing characters escaped (Visible).
func argsSummary(args json.RawMessage) string {
	return sandbox.Cap(Visible(string(RedactJSON(args))), MaxArgsSummaryBytes)
}

// timedOut wraps the E_TOOL_DENIED error of an approval that nobody gave
// or refused within the approval timeout, so that the call is audited as
// "approval_timeout", not "declined"; the broker unwraps it.
type timedOut struct{ error }
