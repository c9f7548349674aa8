package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/expr-lang/expr/vm"
)

// The two callers. A Request's Caller is one of them; anything else is denied.
const (
	Direct = "direct" // the model, through MCP
	Code   = "code"   // a program in the sandbox
)

// Limits on what a policy evaluates.
const (
	// MaxArgsBytes caps the arguments a `when` condition may see: a call whose
	// arguments are larger is denied before evaluation.
	MaxArgsBytes = 64 << 10
	// MaxArgsDepth caps the nesting of arrays and objects in the arguments a
	// `when` condition may see.
	MaxArgsDepth = 32
	// MaxFileBytes caps a policy file.
	MaxFileBytes = 1 << 20
	// MaxWhenBytes caps one `when` expression.
	MaxWhenBytes = 4 << 10
	// MaxRateKeys caps the token buckets a Checker keeps (one per principal
	// and rate-limited rule). When the table is full and no bucket is idle,
	// calls of principals without a bucket are denied.
	MaxRateKeys = 10000
)

// Request is one attempted call, as the policy sees it. Every field is plain
// data set by the host; nothing in it comes from a client unchecked.
type Request struct {
	// Caller is Direct or Code.
	Caller string
	// Tool is the tool's name.
	Tool string
	// Meta is the tool's metadata, from the catalog.
	Meta ToolMeta
	// Args is the call's arguments, a JSON object. If empty, {}.
	Args json.RawMessage
	// Principal is who the call is made for.
	Principal Principal
	// Run describes the program making the call; zero for direct calls.
	Run Run
	// Time is when the call is made, for rate limits. If zero, time.Now().
	Time time.Time
	// Label is the information-flow label of the call's arguments: the
	// run's label joined with the labels of opaque handles passed among
	// them. Decide joins Run.Label into it, so a caller may set only that.
	Label Label
	// LabelSources are the results that raised Label beyond Run.Label
	// (opaque handles passed as arguments), for the flow a denial names.
	LabelSources []Source
	// ArgLabels is, for each top-level argument holding opaque handles,
	// the join of their labels; an argument not in it carries Run.Label
	// only (arg_labels in a rule joins Run.Label into each).
	ArgLabels map[string]Label
	// Rates, if set, holds the rate-limit buckets instead of the Checker
	// (a store shared by replicas, so that a limit holds across them). If
	// it fails, the call is denied with Decision.Internal set.
	Rates RateStore
}

// RateStore holds token buckets outside the Checker: store.Store (memory
// or Redis) through a small adapter.
type RateStore interface {
	// TakeRate takes one token from the bucket under key, which holds at
	// most capacity tokens and refills at capacity per per; a new bucket is
	// full. It reports whether there was a token.
	TakeRate(key string, capacity int, per time.Duration) (bool, error)
}

// ToolMeta is a tool's metadata (MCP tool annotations and origin).
type ToolMeta struct {
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
	// Source is where the tool comes from: "builtin", "local", or an
	// upstream server's name. If empty, "builtin".
	Source string
	// AllowedCallers is what the tool itself declares. If empty, the tool
	// declares nothing; otherwise it is a ceiling no policy can raise.
	AllowedCallers []string
}

// Principal is who a call is made for: a bearer token's owner over HTTP, the
// local user over stdio. The host sets it; a guest or a client never supplies
// it. (bindings.Principal is this type.)
type Principal struct {
	ID    string   `json:"id"`
	Roles []string `json:"roles,omitempty"`
}

// Run is the state of the program making a call.
type Run struct {
	ID string
	// Calls and CallsByTool count the calls of the run attempted before this
	// one (allowed or not).
	Calls       int
	CallsByTool map[string]int
	// Elapsed is the time since the run started.
	Elapsed time.Duration
	// Label is the join of the labels of every result the program has
	// read so far (see Label); zero (trusted, public) before any.
	Label Label
	// Flow lists the results that raised Label, first first, at most
	// MaxSources: what a denial by a rule that reads labels names.
	Flow []Source
}

// Decision is the answer to one Request. Rule and Reason are always set,
// and recorded in the audit trail whatever the answer. (bindings.Decision is
// this type: every Authorizer answers with it.)
type Decision struct {
	Allow bool
	// Rule names the deciding rule: its `name`, or "rules[i]" (0-based), or
	// one of "defaults" (the file's defaults section), "default" and
	// "default.destructive_direct_only" (the built-in default), or
	// "tool.allowed_callers" (the tool's own declaration).
	Rule string
	// Reason says why, for the audit trail and `sandcall policy explain`.
	Reason string
	// Message is shown to the caller on denial; Hint says what to do instead.
	Message string
	Hint    string
	// RequireApproval is set on an allowed call whose rule requires a
	// person's approval: the host must ask before dispatching, and deny if it
	// cannot ask or the answer is no.
	RequireApproval bool
	// LogArgs says the call's arguments may be logged in clear.
	LogArgs bool
	// Flow names the results whose labels the deciding rule read, when
	// its condition reads labels ("list_messages (call 1, untrusted)"):
	// set on a denial or an approval such a rule caused. Empty otherwise.
	Flow string
	// Internal marks a denial the policy did not decide: a shared store
	// (Request.Rates) could not be reached. The host reports it as an
	// internal error, not as a policy denial.
	Internal bool
}

// Checker is a compiled policy. It is immutable except for the token buckets
// of rate limits, and is safe for concurrent use.
type Checker struct {
	name     string
	rules    []*rule
	defaults callers // callers of tools no rule matches; valid if hasDefaults
	// hasDefaults says the file set defaults.allowed_callers; if not, the
	// built-in default applies.
	hasDefaults bool
	rates       *rateTable
	labels      []*labelRule // the labels section, in order
	plans       []*planRule  // the plans section, in order (plans.go)

	// sel caches find's answer per tool name and metadata (selKey → int,
	// the rule's index or -1): selection depends on nothing else, and a
	// catalog has few tools. At most maxSelCache entries are kept.
	sel  sync.Map
	nsel atomic.Int32
}

const maxSelCache = 4096

type selKey struct {
	name, source string
	flags        uint8
}

// approvalByDefault names the tools a person approves call by call when no
// rule selects them (rule "default.approval"), whatever the policy's
// defaults say: save_program keeps code that runs later as a tool, so the
// operator opts out explicitly (a rule selecting it), never by omission.
var approvalByDefault = map[string]bool{"save_program": true}

// Default returns the checker used when there is no policy file: a tool's
// own AllowedCallers decide; a tool that declares none may be called by
// both callers, except destructive tools, which are direct-only (a person
// sees each call).
func Default() *Checker {
	return &Checker{name: "(default)", rates: newRateTable()}
}

// Name returns the file name the checker was compiled from.
func (c *Checker) Name() string { return c.name }

// MayRequireApproval reports whether a rule of the policy sets
// require_approval: only then can a call wait for a person.
func (c *Checker) MayRequireApproval() bool {
	for _, r := range c.rules {
		if r.approval {
			return true
		}
	}
	return false
}

// callers is a set of callers.
type callers uint8

const (
	callerDirect callers = 1 << iota
	callerCode
	callersBoth = callerDirect | callerCode
)

func callerBit(s string) callers {
	switch s {
	case Direct:
		return callerDirect
	case Code:
		return callerCode
	}
	return 0
}

func (cs callers) String() string {
	var s []string
	if cs&callerDirect != 0 {
		s = append(s, Direct)
	}
	if cs&callerCode != 0 {
		s = append(s, Code)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// rule is one compiled rule.
type rule struct {
	id    string // name, or rules[i]
	index int
	pos   pos

	selector // which tools the rule applies to

	callers    callers
	hasCallers bool // allowed_callers was set; if not, the defaults apply

	when     *vm.Program
	whenSrc  string
	whenArgs bool            // the expression refers to args
	argKeys  map[string]bool // the only members of args it reads; nil: all

	message, hint string
	allowReason   string // "allowed by <id>", built once
	maxCalls      int    // 0: no quota
	rate          *rateSpec
	approval      bool
	logArgs       bool
	pin           bool // served directly even in a large catalog (Pinned)

	usesLabels    bool // when or approval_when reads label, run.label or arg_labels
	usesArgLabels bool // ... arg_labels
	// approvalWhen, if set, limits require_approval to the calls for
	// which it is true.
	approvalWhen    *vm.Program
	approvalWhenSrc string
	approvalArgs    bool
}

// metaMatch matches tool metadata; a nil field matches anything.
type metaMatch struct {
	readOnly, destructive, idempotent, openWorld *bool
	sources                                      []glob
}

func (m *metaMatch) matches(t *ToolMeta) bool {
	eq := func(want *bool, got bool) bool { return want == nil || *want == got }
	if !eq(m.readOnly, t.ReadOnly) || !eq(m.destructive, t.Destructive) ||
		!eq(m.idempotent, t.Idempotent) || !eq(m.openWorld, t.OpenWorld) {
		return false
	}
	if m.sources == nil {
		return true
	}
	src := t.Source
	if src == "" {
		src = "builtin"
	}
	for i := range m.sources {
		if m.sources[i].match(src) {
			return true
		}
	}
	return false
}

// selector says which tools a rule or a labels entry applies to: by name
// (exact or glob; no tools list is every tool) and by metadata.
type selector struct {
	anyTool bool                // no tools list: every tool
	exact   map[string]struct{} // tool names without glob characters
	globs   []glob
	match   metaMatch
}

// selects reports whether the tool is selected (by name and metadata;
// `when` and quotas are per call and do not take part).
func (r *selector) selects(name string, meta *ToolMeta) bool {
	if !r.anyTool {
		_, ok := r.exact[name]
		if !ok {
			for i := range r.globs {
				if r.globs[i].match(name) {
					ok = true
					break
				}
			}
		}
		if !ok {
			return false
		}
	}
	return r.match.matches(meta)
}

// find returns the first rule that selects the tool, or nil.
func (c *Checker) find(name string, meta *ToolMeta) *rule {
	if len(c.rules) == 0 {
		return nil
	}
	k := selKey{name: name, source: meta.Source}
	for i, b := range []bool{meta.ReadOnly, meta.Destructive, meta.Idempotent, meta.OpenWorld} {
		if b {
			k.flags |= 1 << i
		}
	}
	if v, ok := c.sel.Load(k); ok {
		if i := v.(int); i >= 0 {
			return c.rules[i]
		}
		return nil
	}
	i := -1
	for _, r := range c.rules {
		if r.selects(name, meta) {
			i = r.index
			break
		}
	}
	if c.nsel.Load() < maxSelCache {
		if _, loaded := c.sel.LoadOrStore(k, i); !loaded {
			c.nsel.Add(1)
		}
	}
	if i < 0 {
		return nil
	}
	return c.rules[i]
}

// fallback is the decision for a tool no rule selects: the callers and the
// rule name.
func (c *Checker) fallback(meta *ToolMeta) (callers, string) {
	if c.hasDefaults {
		return c.defaults, "defaults"
	}
	if meta.Destructive {
		return callerDirect, "default.destructive_direct_only"
	}
	return callersBoth, "default"
}

// callersFor returns the callers a rule (or, if r is nil, the fallback)
// admits, and the name of what decided.
func (c *Checker) callersFor(r *rule, meta *ToolMeta) (callers, string) {
	if r == nil {
		return c.fallback(meta)
	}
	if r.hasCallers {
		return r.callers, r.id
	}
	cs, _ := c.fallback(meta)
	return cs, r.id
}

func declared(meta *ToolMeta) callers {
	var cs callers
	for _, s := range meta.AllowedCallers {
		cs |= callerBit(s)
	}
	return cs
}

// Exposes reports whether a tool is offered to caller at all — bound as
// tools.<name> in programs (Code) or listed as an MCP tool (Direct). A tool
// is exposed when the first rule that selects it (by name, glob and
// metadata) admits the caller; `when`, quotas and rate limits are per call
// and do not hide a tool. The principal is reserved for rules that will
// select on it; today it does not change the answer.
func (c *Checker) Exposes(tool string, meta ToolMeta, caller string, _ Principal) bool {
	bit := callerBit(caller)
	if bit == 0 {
		return false
	}
	if len(meta.AllowedCallers) > 0 && declared(&meta)&bit == 0 {
		return false
	}
	if len(meta.AllowedCallers) > 0 && !c.hasDefaults && c.find(tool, &meta) == nil {
		return true // the tool's own declaration decides, as in Default
	}
	cs, _ := c.callersFor(c.find(tool, &meta), &meta)
	return cs&bit != 0
}

// Pinned reports whether the rule that selects the tool (the first, by
// name, glob and metadata) sets pin: true. A server whose catalog is over
// its list threshold serves only pinned tools as direct MCP tools (the rest
// stay reachable from code and through search_tools); pinning does not
// expose a tool to a caller its rule does not allow.
func (c *Checker) Pinned(tool string, meta ToolMeta) bool {
	r := c.find(tool, &meta)
	return r != nil && r.pin
}

// Decide decides one call. It never panics on any input and denies on any
// error, naming the rule and the reason.
func (c *Checker) Decide(req *Request) (d Decision) {
	defer func() {
		if p := recover(); p != nil {
			d = Decision{Rule: "policy.error", Reason: fmt.Sprintf("policy evaluation failed: %v", p),
				Message: "the policy could not be evaluated, so the call is denied"}
		}
	}()
	if req == nil {
		return Decision{Rule: "policy.error", Reason: "no request", Message: "the policy could not be evaluated, so the call is denied"}
	}
	bit := callerBit(req.Caller)
	if bit == 0 {
		return Decision{Rule: "policy.error", Reason: fmt.Sprintf("unknown caller %q", capString(req.Caller, 32)),
			Message: "the policy could not be evaluated, so the call is denied"}
	}
	meta := &req.Meta
	if len(meta.AllowedCallers) > 0 && declared(meta)&bit == 0 {
		return callerDenial(req, "tool.allowed_callers", declared(meta), "", "")
	}
	r := c.find(req.Tool, meta)
	if r == nil {
		cs, id := c.fallback(meta)
		if len(meta.AllowedCallers) > 0 && !c.hasDefaults {
			cs, id = declared(meta), "tool.allowed_callers"
		}
		if cs&bit == 0 {
			return callerDenial(req, id, cs, "", "")
		}
		if id == "default.destructive_direct_only" {
			id = "default" // the rule that allowed: as DefaultAuthorizer names it
		}
		if approvalByDefault[req.Tool] {
			return Decision{Allow: true, Rule: "default.approval", RequireApproval: true,
				Reason: allowedByFallback(bit, id) + "; a person approves each call of " + req.Tool + " unless a rule selects it"}
		}
		return Decision{Allow: true, Rule: id, Reason: allowedByFallback(bit, id)}
	}
	cs, _ := c.callersFor(r, meta)
	if cs&bit == 0 {
		return callerDenial(req, r.id, cs, r.message, r.hint)
	}
	if r.maxCalls > 0 {
		if n := req.Run.CallsByTool[req.Tool]; n >= r.maxCalls {
			return Decision{Rule: r.id,
				Reason:  fmt.Sprintf("quota: %d calls of %s already in this run (max_calls_per_run %d)", n, req.Tool, r.maxCalls),
				Message: fmt.Sprintf("tool %s may be called at most %d times per run", req.Tool, r.maxCalls),
				Hint:    "Batch the work into fewer calls, or filter before calling."}
		}
	}
	if r.when != nil {
		ok, err := r.eval(req)
		if err != nil {
			return Decision{Rule: r.id, Reason: "when: " + err.Error(),
				Message: orDefault(err.message(), "the policy could not evaluate its condition for this call, so it is denied"),
				Hint:    err.hint}
		}
		if !ok {
			d := Decision{Rule: r.id, Reason: "when is false: " + capString(r.whenSrc, 200),
				Message: orDefault(r.message, "the policy does not allow this call of "+req.Tool),
				Hint:    r.hint}
			if r.usesLabels {
				flowDenial(&d, req)
			}
			return d
		}
	}
	if r.rate != nil && req.Rates != nil {
		ok, err := req.Rates.TakeRate(fmt.Sprintf("rate:%s:%s", r.id, req.Principal.ID), r.rate.calls, r.rate.per)
		if err != nil {
			return Decision{Rule: r.id, Internal: true, Reason: "rate: the shared rate store is unavailable",
				Message: "the rate limit of " + req.Tool + " could not be checked (the shared store is unavailable), so the call was not made",
				Hint:    "Retry in a few seconds; if it persists, the operator should check the store (store: in sandcall.yaml)."}
		}
		if !ok {
			return Decision{Rule: r.id,
				Reason:  fmt.Sprintf("rate: principal %q over %d calls per %s", capString(req.Principal.ID, 64), r.rate.calls, r.rate.per),
				Message: fmt.Sprintf("too many calls of %s: at most %d per %s", req.Tool, r.rate.calls, r.rate.per),
				Hint:    "Wait and try again later, or make fewer calls."}
		}
	} else if r.rate != nil {
		if !c.rates.take(r, req.Principal.ID, req.Time) {
			return Decision{Rule: r.id,
				Reason:  fmt.Sprintf("rate: principal %q over %d calls per %s", capString(req.Principal.ID, 64), r.rate.calls, r.rate.per),
				Message: fmt.Sprintf("too many calls of %s: at most %d per %s", req.Tool, r.rate.calls, r.rate.per),
				Hint:    "Wait and try again later, or make fewer calls."}
		}
	}
	d = Decision{Allow: true, Rule: r.id, Reason: r.allowReason, RequireApproval: r.approval, LogArgs: r.logArgs}
	if r.approval && r.approvalWhen != nil {
		ok, err := r.evalProgram(r.approvalWhen, r.approvalArgs, req)
		switch {
		case err != nil:
			d.Reason += "; approval required: approval_when failed: " + err.Error()
		case !ok:
			d.RequireApproval = false
		default:
			d.Reason += "; approval required: approval_when is true: " + capString(r.approvalWhenSrc, 200)
			if r.usesLabels {
				d.Flow = Flow(flowOf(req))
				if d.Flow != "" {
					d.Reason += "; flow: " + d.Flow
				}
			}
		}
	}
	return d
}

// flowOf returns the sources of the call's label: the run's flow, then the
// opaque handles among the arguments.
func flowOf(req *Request) []Source {
	if len(req.LabelSources) == 0 {
		return req.Run.Flow
	}
	return append(append([]Source(nil), req.Run.Flow...), req.LabelSources...)
}

// flowDenial names the flow in a denial by a rule that reads labels: the
// results the run read that raised the label its condition saw.
func flowDenial(d *Decision, req *Request) {
	d.Flow = Flow(flowOf(req))
	if d.Flow == "" {
		d.Flow = "no labelled data read"
	}
	d.Reason += "; flow: " + d.Flow
	d.Message += " (data flow: " + capString(d.Flow, 1024) + ")"
}

func reasonOfFallback(id string) string {
	switch id {
	case "defaults":
		return "no rule matched; defaults.allowed_callers"
	case "tool.allowed_callers":
		return "no rule matched; the tool's own allowed_callers"
	}
	return "no rule matched; built-in default"
}

// fallbackReasons holds Decide's reasons for a call that no rule matched
// and its fallback allowed, by caller and fallback, built once: the
// concatenation per call was 2.6% of the server's CPU in a fan-out.
var fallbackReasons = func() map[callers]map[string]string {
	t := map[callers]map[string]string{}
	for _, c := range []string{Direct, Code} {
		t[callerBit(c)] = map[string]string{}
		for _, id := range []string{"defaults", "tool.allowed_callers", ""} {
			t[callerBit(c)][id] = "caller " + c + " allowed (" + reasonOfFallback(id) + ")"
		}
	}
	return t
}()

// allowedByFallback is "caller code allowed (no rule matched; …)" for the
// caller bit and the fallback rule id.
func allowedByFallback(bit callers, id string) string {
	byID := fallbackReasons[bit]
	if r, ok := byID[id]; ok {
		return r
	}
	return byID[""] // every other id: the built-in default
}

// callerDenial denies a caller not in cs, with the messages of
// bindings.DefaultAuthorizer unless the rule has its own.
func callerDenial(req *Request, id string, cs callers, msg, hint string) Decision {
	d := Decision{Rule: id, Reason: fmt.Sprintf("caller %s not in allowed_callers %s", req.Caller, cs)}
	switch {
	case cs == 0:
		d.Message = "tool " + req.Tool + " may not be called"
	case req.Caller == Code:
		d.Message = "tool " + req.Tool + " may not be called from code"
		d.Hint = "Call " + req.Tool + " directly as an MCP tool instead (it is in your tool list, or search_tools adds it); programs may not call it."
	default:
		d.Message = "tool " + req.Tool + " may only be called from code"
		d.Hint = "Call it from a program with run_code."
	}
	if msg != "" {
		d.Message = msg
	}
	if hint != "" {
		d.Hint = hint
	}
	return d
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// capString caps s at n bytes, on a rune boundary.
func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// NumRules returns the number of rules (not counting defaults).
func (c *Checker) NumRules() int { return len(c.rules) }
