package bindings

import (
	"context"
	"encoding/json"
	"time"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/tools"
)

// Principal is who a call is made for: a bearer token's owner over HTTP, the
// local user over stdio. The host sets it; a guest or a client never supplies it.
type Principal struct {
	ID    string   `json:"id"`
	Roles []string `json:"roles,omitempty"`
}

// LocalPrincipal is the principal of stdio sessions and of `sandcall run`
// when the configuration names none.
var LocalPrincipal = Principal{ID: "local"}

type callInfoKey struct{}

// CallInfoFrom returns the CallInfo of the call whose handler received ctx:
// the broker attaches it to the context it passes to a tool's Handler, so a
// handler can tell who calls (for example, to filter what a discovery tool
// shows by what the principal may call). ok is false outside a broker call.
// The CallInfo must not be modified.
func CallInfoFrom(ctx context.Context) (info *CallInfo, ok bool) {
	info, ok = ctx.Value(callInfoKey{}).(*CallInfo)
	return info, ok
}

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
}

// Decision is an Authorizer's answer. Rule and Reason are recorded in the
// audit trail whatever the answer; Message is shown to the caller on denial.
type Decision struct {
	Allow   bool
	Rule    string
	Reason  string
	Message string
	Hint    string
	// RequireApproval marks an allowed call a person must approve before
	// dispatch: the broker asks the run's Approver and denies on anything
	// but an explicit approval.
	RequireApproval bool
	// LogArgs says the call's arguments may be logged in clear.
	LogArgs bool
	// Flow names the results whose labels led a rule that reads labels
	// to deny the call or to ask for approval (policy.Decision.Flow).
	Flow string
	// Internal marks a denial that is the host's failure, not the policy's
	// answer (a shared store could not be reached): the caller gets
	// E_INTERNAL with Message and Hint instead of E_TOOL_DENIED.
	Internal bool
}

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
type DefaultAuthorizer struct{}

var _ Authorizer = DefaultAuthorizer{}

func (DefaultAuthorizer) allows(t *tools.Tool, c tools.Caller) (bool, string) {
	if len(t.AllowedCallers) == 0 {
		if t.Effects.Destructive && c == tools.Code {
			return false, "default.destructive_direct_only"
		}
		return true, "default"
	}
	if t.Allows(c) {
		return true, "tool.allowed_callers"
	}
	return false, "tool.allowed_callers"
}

// Authorize implements Authorizer.
func (a DefaultAuthorizer) Authorize(_ context.Context, c *CallInfo) Decision {
	ok, rule := a.allows(c.Tool, c.Caller)
	if ok {
		return Decision{Allow: true, Rule: rule, Reason: "caller " + string(c.Caller) + " allowed"}
	}
	d := Decision{Rule: rule, Reason: "caller " + string(c.Caller) + " not allowed"}
	if c.Caller == tools.Code {
		d.Message = "tool " + c.Tool.Name + " may not be called from code"
		d.Hint = "Call " + c.Tool.Name + " directly as an MCP tool instead (it is in your tool list, or search_tools adds it); programs may not call it."
	} else {
		d.Message = "tool " + c.Tool.Name + " may only be called from code"
		d.Hint = "Call it from a program with run_code."
	}
	return d
}

// Exposes implements Authorizer.
func (a DefaultAuthorizer) Exposes(t *tools.Tool, c tools.Caller, _ Principal) bool {
	ok, _ := a.allows(t, c)
	return ok
}
