package bindings

import (
	"context"
	"encoding/json"
	"time"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// Principal is who a call is made for: a bearer token's owner over HTTP, the
// local user over stdio. The host sets it; a guest or a client never supplies
// it. It is policy.Principal, so that a policy sees it as is.
type Principal = policy.Principal

// LocalPrincipal is the principal of stdio sessions and of `sandcall run`
// when the configuration names none.
var LocalPrincipal = Principal{ID: "local"}

// CallInfoFrom returns the CallInfo of the call whose handler received ctx:
// the broker attaches it (tools.WithCall) to the context it passes to a
// tool's Handler, so a handler can tell who calls (for example, to filter
// what a discovery tool shows by what the principal may call); a tool below
// this layer reads the caller with tools.CallerFrom. ok is false outside a
// broker call. The CallInfo must not be modified.
func CallInfoFrom(ctx context.Context) (info *CallInfo, ok bool) {
	c, ok := tools.CallFrom(ctx)
	if !ok {
		return nil, false
	}
	info, ok = c.(*CallInfo)
	return info, ok
}

// CallerOf implements tools.CallContext.
func (c *CallInfo) CallerOf() tools.Caller { return c.Caller }

// CallInfo describes one attempted call, as an Authorizer sees it.
type CallInfo struct {
	Caller    tools.Caller
	Tool      *tools.Tool
	Args      json.RawMessage // validated against the tool's input schema
	Principal Principal
	RunID     string // empty for direct calls
	Seq       int    // 1-based call number within the run
	// Calls and CallsByTool count the calls of the run attempted before this one.
	Calls       int
	CallsByTool map[string]int
	Elapsed     time.Duration // since the run started
	// Label is the join of the labels of every result the run had read
	// when the call was made (information flow; zero for direct calls),
	// and Flow the results that raised it (policy.Run.Flow).
	Label policy.Label
	Flow  []policy.Source
	// ArgLabel is the label of the arguments beyond Label: the join of
	// the opaque handles passed among them, and ArgFlow those handles'
	// results. Zero when no handle is passed.
	ArgLabel policy.Label
	ArgFlow  []policy.Source
	// ArgLabels is, per top-level argument holding handles, the join of
	// their labels (policy.Request.ArgLabels).
	ArgLabels map[string]policy.Label
	// Plan is the plan of the program making the call (plan.go); nil for
	// direct calls and when it could not be read.
	Plan *sandbox.Plan
	// Depth is 0 for run_code's program and direct calls, n for a program
	// tool called at depth n-1 (programs.go).
	Depth int

	run *run // the run making the call, for program tools (programs.go)
}

// Decision is an Authorizer's answer: policy.Decision, one type for every
// Authorizer. Rule and Reason are recorded in the audit trail whatever the
// answer; Message is shown to the caller on denial. RequireApproval marks an
// allowed call a person must approve before dispatch: the broker asks the
// run's Approver and denies on anything but an explicit approval. Flow
// names the results whose labels led a rule to deny or to ask; Internal
// marks a denial that is the host's failure (a shared store could not be
// reached), reported as E_INTERNAL.
type Decision = policy.Decision

// Authorizer is the seam where a call is allowed or not. The broker asks it
// for every call at dispatch, from code and direct alike. Implementations must
// be safe for concurrent use and must deny on any internal error.
type Authorizer interface {
	// Authorize decides one call.
	Authorize(ctx context.Context, c *CallInfo) Decision
	// Exposes reports whether t is offered to caller at all: bound as
	// tools.<name> in programs (Code) or listed as an MCP tool (Direct).
	// Calls are still authorized at dispatch whatever Exposes says.
	Exposes(t *tools.Tool, caller tools.Caller, p Principal) bool
}

// DefaultAuthorizer is the policy when the operator wrote none: a tool's own
// AllowedCallers decide; a tool that declares none may be called by both,
// except destructive tools, which are direct-only (a person sees each call).
// It is policy.Default() — one default policy, written once in policy — as
// a value type that embeds well.
type DefaultAuthorizer struct{}

var _ Authorizer = DefaultAuthorizer{}

// defaultPolicy is the authorizer of policy.Default(). Its checker holds no
// rate limits, so one value serves every broker.
var defaultPolicy = NewPolicyAuthorizer(policy.Default())

// Authorize implements Authorizer.
func (DefaultAuthorizer) Authorize(ctx context.Context, c *CallInfo) Decision {
	return defaultPolicy.Authorize(ctx, c)
}

// Exposes implements Authorizer.
func (DefaultAuthorizer) Exposes(t *tools.Tool, c tools.Caller, p Principal) bool {
	return defaultPolicy.Exposes(t, c, p)
}
