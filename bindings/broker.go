package bindings

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/semaphore"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools"
)

// BrokerConfig configures a Broker. The zero value of each optional field is
// the safe default, stated on the field.
type BrokerConfig struct {
	// Catalog holds the tools. Required.
	Catalog *tools.Catalog
	// Authorizer decides every call. If nil, DefaultAuthorizer.
	Authorizer Authorizer
	// Audit receives one record per attempted call and one per run
	// (DESIGN.md §10). If nil, records are discarded.
	Audit *slog.Logger
	// Logger receives operational messages (a tool that panicked, say). If
	// nil, they are discarded.
	Logger *slog.Logger
	// CallTimeout bounds one tool call. If zero, 30 s; a run's own deadline
	// applies as well.
	CallTimeout time.Duration
	// MaxOutputBytes caps one tool result when the tool sets no OutputBudget.
	// If zero, 4 MiB.
	MaxOutputBytes int
	// ApprovalTimeout bounds the wait for a person's answer to an approval
	// (require_approval); no answer in time denies the call. If zero, 2
	// minutes. A run's own deadline applies as well.
	ApprovalTimeout time.Duration
	// Observer receives per-call and per-run outcomes and latencies (for
	// metrics). If nil, nothing is observed.
	Observer Observer
	// MaxRetries caps the extra attempts the broker makes after a transient
	// failure (a retryable E_TOOL_FAILED, the broker's own per-call timeout
	// included) of an idempotent tool (Effects.Idempotent); other tools and
	// other errors are never retried. If zero, 2; if negative, no call is
	// retried.
	MaxRetries int
	// RetryBackoff is the wait before the first retry; each later retry
	// waits four times longer, each wait jittered to a random 50-100 % of
	// it. If zero, 20 ms (so 20 ms, then 80 ms).
	RetryBackoff time.Duration
	// Now is the clock that decides whether a deprecated alias
	// (tools.Alias) is still callable. If nil, time.Now.
	Now func() time.Time
	// Shared, if set, holds the policy's rate-limit buckets (a store shared
	// by replicas, so that a limit of N calls holds across them). If nil,
	// each policy counts in its own memory.
	Shared store.Store
	// Tracer, if set, records a span per run and per tool call (trace.go).
	// If nil, nothing is traced.
	Tracer trace.TracerProvider
}

// Observer receives the outcome of every attempted call and every run, for
// counters and latency histograms. Outcomes are "ok", "failed" and
// "denied" for calls, "ok" and "error" for runs. tool is "(unknown)" for a
// name not in the catalog, so a guest cannot grow the label set. Methods
// are called on the caller's goroutine and must not block.
type Observer interface {
	ObserveCall(tool, caller, outcome string, d time.Duration)
	ObserveRun(outcome, code string, d time.Duration)
}

// Broker is the single path of every tool call, from code or direct: lookup,
// validation, authorization, budgets, dispatch, output budget and audit.
// It is safe for concurrent use.
type Broker struct {
	shared    store.Store // nil: rate limits count in memory
	catalog   *tools.Catalog
	auth      atomic.Pointer[authorizerBox]
	audit     *slog.Logger
	log       *slog.Logger
	timeout   time.Duration
	maxOutput int
	approval  time.Duration
	obs       Observer
	retries   int
	backoff   time.Duration
	now       func() time.Time
	tracer    trace.Tracer // nil: tracing off (trace.go)

	obsMu     sync.Mutex
	onAuthSet []func()

	known known // names the catalog held, and why missing ones are (unknown.go)
}

type authorizerBox struct{ a Authorizer }

// NewBroker returns a broker for cfg.
func NewBroker(cfg BrokerConfig) (*Broker, error) {
	if cfg.Catalog == nil {
		return nil, errors.New("bindings: BrokerConfig.Catalog is required")
	}
	b := &Broker{
		shared:    cfg.Shared,
		catalog:   cfg.Catalog,
		audit:     cfg.Audit,
		log:       cfg.Logger,
		timeout:   cfg.CallTimeout,
		maxOutput: cfg.MaxOutputBytes,
		approval:  cfg.ApprovalTimeout,
		obs:       cfg.Observer,
		retries:   cfg.MaxRetries,
		backoff:   cfg.RetryBackoff,
		now:       cfg.Now,
	}
	switch {
	case b.retries == 0:
		b.retries = 2
	case b.retries < 0:
		b.retries = 0
	}
	if b.backoff <= 0 {
		b.backoff = 20 * time.Millisecond
	}
	if b.now == nil {
		b.now = time.Now
	}
	if cfg.Tracer != nil {
		b.tracer = cfg.Tracer.Tracer(TracerName)
	}
	if b.approval <= 0 {
		b.approval = 2 * time.Minute
	}
	if b.audit == nil {
		b.audit = slog.New(slog.DiscardHandler)
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.timeout <= 0 {
		b.timeout = 30 * time.Second
	}
	if b.maxOutput <= 0 {
		b.maxOutput = 4 << 20
	}
	a := cfg.Authorizer
	if a == nil {
		a = DefaultAuthorizer{}
	}
	b.auth.Store(&authorizerBox{a})
	b.watchNames()
	return b, nil
}

// Catalog returns the broker's catalog.
func (b *Broker) Catalog() *tools.Catalog { return b.catalog }

// SetAuthorizer swaps the authorizer atomically; calls already past
// authorization are not affected, every later call sees the new one.
func (b *Broker) SetAuthorizer(a Authorizer) {
	if a == nil {
		a = DefaultAuthorizer{}
	}
	b.auth.Store(&authorizerBox{a})
	b.obsMu.Lock()
	fs := b.onAuthSet
	b.obsMu.Unlock()
	for _, f := range fs {
		f()
	}
}

// OnAuthorizerChange registers f to be called after every SetAuthorizer (a
// reloaded policy file calls it), so that listings derived from the policy
// (the MCP tool list, run_code's bindings) can be rebuilt. f runs
// synchronously in the goroutine that set the authorizer and must be quick.
// There is no way to unregister.
func (b *Broker) OnAuthorizerChange(f func()) {
	if f == nil {
		return
	}
	b.obsMu.Lock()
	b.onAuthSet = append(b.onAuthSet, f)
	b.obsMu.Unlock()
}

func (b *Broker) authorizer() Authorizer { return b.auth.Load().a }

// Exposed returns the tools offered to caller for p, sorted by name.
func (b *Broker) Exposed(caller tools.Caller, p Principal) []*tools.Tool {
	a := b.authorizer()
	all := b.catalog.List()
	out := all[:0]
	for _, t := range all {
		if a.Exposes(t, caller, p) {
			out = append(out, t)
		}
	}
	return out
}

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

// run is the per-run state: it implements sandbox.Host for one program.
type run struct {
	b         *Broker
	id        string
	principal Principal
	caller    tools.Caller
	limits    sandbox.Limits
	start     time.Time
	sem       *semaphore.Weighted
	approver  Approver
	tier      string
	rp        *replayState // resumable runs only (replay.go)

	seq atomic.Int64

	flow runFlow // information-flow label of what the program read (labels.go)

	mu      sync.Mutex // guards stats, notes, meta, dropped
	stats   sandbox.CallStats
	notes   []string       // for the model: cut outputs, deprecated names (see note)
	dropped int            // notes left out past maxNotes
	meta    map[string]any // a direct call's _meta (see DirectResult)
}

// maxNotes caps the notes of one run; the rest are counted, not kept.
const maxNotes = 16

// note records a sentence for the model (a line in the run's logs, or a
// direct call's note). Identical sentences are kept once.
func (r *run) note(s string) {
	s = sandbox.Cap(s, 512)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.notes {
		if n == s {
			return
		}
	}
	if len(r.notes) >= maxNotes {
		r.dropped++
		return
	}
	r.notes = append(r.notes, s)
}

// logNotes returns the run's notes as log lines.
func (r *run) logNotes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.notes) == 0 {
		return nil
	}
	out := make([]string, 0, len(r.notes)+1)
	for _, n := range r.notes {
		out = append(out, "[sandcall] "+n)
	}
	if r.dropped > 0 {
		out = append(out, fmt.Sprintf("[sandcall] %d more notes like these were left out", r.dropped))
	}
	return out
}

func (r *run) setMeta(k string, v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.meta == nil {
		r.meta = make(map[string]any)
	}
	r.meta[k] = v
}

func (r *run) init() {
	r.sem = semaphore.NewWeighted(int64(r.limits.MaxInFlight))
	r.stats.ByTool = make(map[string]int)
}

var _ sandbox.Host = (*run)(nil)

// outcome of one call for the stats.
type outcome int

const (
	outOK outcome = iota
	outFailed
	outDenied
)

// Call implements sandbox.Host.
//
// Every error it returns is an *sandbox.Error completed by WithDefaults: it
// has a hint (a default per code when the tool gave none) and, for tool
// errors, a reason.
func (r *run) Call(ctx context.Context, name string, args json.RawMessage) (res json.RawMessage, err error) {
	if r.rp != nil { // a resumable run: it suspends only once no call is inside
		r.rp.enter()
		defer r.rp.leave()
	}
	seq := int(r.seq.Add(1))
	t0 := time.Now()
	ctx, span := r.startCallSpan(ctx, seq)
	// The guest chose name: it is capped and cleaned before it reaches a
	// message or an audit record, whichever way the call ends.
	rec := auditCall{seq: seq, tool: safeName(name), attempt: 1}
	defer func() {
		var e *sandbox.Error
		if err != nil {
			e = sandbox.AsError(err, sandbox.EToolFailed).WithDefaults()
			if len(e.Message) > sandbox.MaxMessageBytes || len(e.Hint) > sandbox.MaxMessageBytes {
				c := *e
				c.Message = sandbox.Cap(c.Message, sandbox.MaxMessageBytes)
				c.Hint = sandbox.Cap(c.Hint, sandbox.MaxMessageBytes)
				e = &c
			}
			e = redactError(e)
			res, err = nil, e
		}
		rec.err = e
		if e == nil && rec.rawError {
			rec.err = &sandbox.Error{Code: sandbox.EToolFailed, Tool: rec.tool, Message: "the tool's result has isError set"}
		}
		rec.resultBytes = len(res)
		rec.dur = time.Since(t0)
		r.finishCall(rec)
		span.end(r, rec)
	}()

	if seq > r.limits.MaxCalls {
		rec.decision = "limit"
		return nil, &sandbox.Error{Code: sandbox.EToolCallLimit, Tool: safeName(name),
			Message: fmt.Sprintf("the run made more than %d tool calls", r.limits.MaxCalls),
			Hint:    "Batch the work into fewer calls, or filter before calling."}
	}
	name, opaque, hres, herr, done := r.handleCall(name, args, &rec)
	if done {
		if herr != nil {
			return nil, herr
		}
		return hres, nil
	}
	t, alias, ok := r.b.catalog.Resolve(name)
	if !ok {
		rec.decision = "unknown"
		return nil, r.b.missingTool(name, r.caller, r.principal)
	}
	if alias.Name != "" {
		rec.alias = alias.Name
		if !alias.Live(r.b.now()) {
			rec.decision = "unknown"
			return nil, renamedTool(alias.Name, t.Name)
		}
	}
	rec.tool = t.Name
	rec.known = true
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	rec.args = args
	args, hl, herr := r.resolveHandles(t.Name, args)
	if herr != nil {
		rec.decision = "invalid"
		return nil, herr
	}

	info := &CallInfo{Caller: r.caller, Tool: t, Args: args, Principal: r.principal,
		RunID: r.id, Seq: seq, Elapsed: time.Since(r.start)}
	r.mu.Lock()
	info.Calls = r.stats.Total
	info.CallsByTool = maps.Clone(r.stats.ByTool)
	r.mu.Unlock()
	r.labelCall(info)
	info.ArgLabel, info.ArgFlow, info.ArgLabels = hl.label, hl.sources, hl.byArg
	d := r.b.authorize(ctx, info)
	rec.rule = d.Rule
	rec.logArgs = d.LogArgs
	rec.flow = d.Flow
	if !d.Allow {
		rec.decision = "deny"
		msg := d.Message
		if msg == "" {
			msg = "the policy denied this call"
		}
		code := sandbox.EToolDenied
		if d.Internal {
			code = sandbox.EInternal
		}
		return nil, &sandbox.Error{Code: code, Tool: t.Name, Rule: d.Rule,
			Message: sandbox.Cap(msg, sandbox.MaxMessageBytes), Hint: d.Hint}
	}
	// Validation comes after authorization: a caller the policy denies
	// learns nothing of the tool's schema from an E_TOOL_ARGS message.
	if err := t.Validate(args); err != nil {
		rec.decision = "invalid"
		return nil, err
	}
	rec.decision = "allow"
	var e *sandbox.Error
	replayed := false
	if r.rp != nil { // a resumable run (replay.go)
		res, e, replayed = r.rp.answer(t.Name, args)
		if replayed {
			rec.decision = "replayed"
		} else if err := r.rpApproval(ctx, info, d, args, &rec); err != nil {
			return nil, err
		}
	} else if d.RequireApproval {
		if err := r.approve(ctx, info, d); err != nil {
			rec.decision = "declined"
			if t, ok := err.(timedOut); ok {
				rec.decision = "approval_timeout" // nobody answered: not a decline
				err = t.error
			}
			return nil, err
		}
		rec.decision = "approved"
	}

	dctx, meta := r.withResultMeta(ctx, t)
	switch {
	case replayed:
	case r.rp != nil:
		res, e = r.rp.dispatch(dctx, t.Name, args, func() (json.RawMessage, *sandbox.Error) {
			return r.dispatchRetrying(dctx, t, args, info, &rec)
		})
	default:
		res, e = r.dispatchRetrying(dctx, t, args, info, &rec)
	}
	var label policy.Label
	if e == nil || e.Code == sandbox.EToolFailed { // an error's text is the tool's data too
		label = r.labelResult(t, seq, meta, !opaque || e != nil)
	}
	if e != nil {
		return nil, e
	}
	if t.DirectRaw && r.caller == tools.Direct {
		rec.rawError = rawIsError(res) // served as is, but a failed call
	}
	budget := t.OutputBudget
	if budget <= 0 {
		budget = r.b.maxOutput
	}
	if len(res) > budget {
		if res, e = r.cut(t, res, budget, &rec); e != nil {
			return nil, e
		}
	}
	if alias.Name != "" {
		res = r.deprecated(t, alias, res)
	}
	if opaque {
		if res, e = r.keepHandle(res, policy.Source{Tool: t.Name, Seq: seq, Label: label}); e != nil {
			return nil, e
		}
	}
	return res, nil
}

// dispatchRetrying runs the handler, and again after a transient failure of
// an idempotent tool: at most b.retries more times, after a jittered
// backoff, never past ctx's deadline. The call holds an in-flight slot only
// while its handler runs, not while it waits to retry, so a backoff never
// blocks the run's other calls. The policy decided once, for the logical
// call, and the call counts once against the run's limits; each failed
// attempt that is retried gets its own audit record (with its attempt
// number), and the retries are counted in CallStats.Retries.
func (r *run) dispatchRetrying(ctx context.Context, t *tools.Tool, args json.RawMessage, info *CallInfo, rec *auditCall) (json.RawMessage, *sandbox.Error) {
	retry := t.Effects.Idempotent && r.b.retries > 0
	for attempt := 1; ; attempt++ {
		rec.attempt = attempt
		var a0 time.Time
		if retry { // timed for the audit record of a failed attempt
			a0 = time.Now()
		}
		res, e := r.attempt(ctx, t, args, info)
		if e == nil {
			return res, nil
		}
		if !retry || attempt > r.b.retries || !e.Retryable || e.Code != sandbox.EToolFailed {
			return nil, e
		}
		wait := r.b.retryWait(attempt)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			return nil, e // no time left to try again
		}
		failed := *rec
		failed.err, failed.dur = e.WithDefaults(), time.Since(a0)
		r.auditRecord(failed)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled)
		case <-timer.C:
		}
		r.mu.Lock()
		r.stats.Retries++
		r.mu.Unlock()
	}
}

// retryWait is the jittered wait before retry number attempt (1-based):
// backoff·4^(attempt-1), scaled by a random 50-100 %.
func (b *Broker) retryWait(attempt int) time.Duration {
	d := b.backoff << (2 * (attempt - 1))
	if d <= 0 || d > time.Minute {
		d = time.Minute
	}
	return d/2 + rand.N(d/2+1)
}

// attempt runs the handler once, in an in-flight slot, under the per-call
// timeout.
func (r *run) attempt(ctx context.Context, t *tools.Tool, args json.RawMessage, info *CallInfo) (json.RawMessage, *sandbox.Error) {
	if err := r.sem.Acquire(ctx, 1); err != nil {
		return nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled)
	}
	defer r.sem.Release(1)
	cctx, cancel := context.WithTimeout(ctx, r.b.timeout)
	defer cancel()
	res, e := r.b.dispatch(tools.WithCall(cctx, info), t, args)
	if e != nil {
		if ctx.Err() != nil { // the run ended, not the tool
			return nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled)
		}
		if cctx.Err() != nil {
			return nil, &sandbox.Error{Code: sandbox.EToolFailed, Tool: t.Name, Retryable: true,
				Reason:  sandbox.ReasonTransient,
				Message: fmt.Sprintf("tool %s did not answer within %s", t.Name, r.b.timeout),
				Hint:    "Try again later, or ask for less data."}
		}
		return nil, e
	}
	return res, nil
}

// cut cuts a result over budget by whole items (see truncate.go), or
// returns E_OUTPUT_LIMIT when it cannot. A program's object result gets
// the markers in band; every cut is noted for the model.
func (r *run) cut(t *tools.Tool, res json.RawMessage, budget int, rec *auditCall) (json.RawMessage, *sandbox.Error) {
	n := len(res)
	out, c, ok := cutRows(res, budget, r.caller == tools.Code)
	if !ok {
		return nil, &sandbox.Error{Code: sandbox.EOutputLimit, Tool: t.Name,
			Message: fmt.Sprintf("tool %s returned %d bytes, over its %d-byte output budget, and the result cannot be cut by whole items", t.Name, n, budget),
			Hint:    "Ask for less: narrow the arguments or paginate."}
	}
	rec.omitted = c.Omitted
	r.mu.Lock()
	r.stats.Truncated++
	r.mu.Unlock()
	what := "items"
	if c.Field != "" {
		what = "items of " + strconv.Quote(safeName(c.Field))
	}
	r.note(fmt.Sprintf("tool %s returned %d bytes, over its %d-byte output budget: kept the first %d %s, left out %d. Narrow the arguments or paginate to see the rest.",
		t.Name, n, budget, c.Kept, what, c.Omitted))
	if r.caller == tools.Direct {
		r.setMeta("truncated", map[string]any{"field": c.Field, "kept": c.Kept, "omitted": c.Omitted})
	}
	return out, nil
}

// deprecated marks the result of a call made by a live alias: the model
// is told the replacement in a note (a line of the run's logs, a direct
// call's note and _meta), and a program's object result also gets a
// next_action key, unless it has one.
func (r *run) deprecated(t *tools.Tool, a tools.Alias, res json.RawMessage) json.RawMessage {
	next := fmt.Sprintf("Call %s instead of %s: %s is a deprecated name that stops working after %s.",
		t.Name, a.Name, a.Name, a.Until.UTC().Format(time.RFC3339))
	r.note(next)
	if r.caller == tools.Direct {
		r.setMeta("next_action", next)
		return res
	}
	if out, ok := addKey(res, "next_action", next); ok {
		return out
	}
	return res
}

// authorize asks the authorizer; a panic denies (and is logged), since the
// call may run on a goroutine that nothing above recovers.
func (b *Broker) authorize(ctx context.Context, info *CallInfo) (d Decision) {
	defer func() {
		if p := recover(); p != nil {
			b.log.Error("authorizer panicked; denying", "tool", info.Tool.Name, "panic", fmt.Sprint(p))
			d = Decision{Rule: "authorizer.panic", Reason: "the authorizer failed",
				Message: "the policy could not be evaluated, so the call is denied"}
		}
	}()
	if b.shared != nil {
		ctx = context.WithValue(ctx, rateStoreKey{}, sharedRates{b.shared})
	}
	return b.authorizer().Authorize(ctx, info)
}

// dispatch runs the handler, turning a panic or a bare Go error into an
// *sandbox.Error that leaks nothing.
func (b *Broker) dispatch(ctx context.Context, t *tools.Tool, args json.RawMessage) (res json.RawMessage, err *sandbox.Error) {
	defer func() {
		if p := recover(); p != nil {
			b.log.Error("tool panicked", "tool", t.Name, "panic", fmt.Sprint(p))
			res, err = nil, &sandbox.Error{Code: sandbox.EToolFailed, Tool: t.Name,
				Message: "tool " + t.Name + " failed with an internal error"}
		}
	}()
	res, herr := t.Handler(ctx, args)
	if herr != nil {
		var e *sandbox.Error
		if !errors.As(herr, &e) {
			b.log.Warn("tool failed", "tool", t.Name, "err", herr.Error())
			e = &sandbox.Error{Code: sandbox.EToolFailed, Message: "tool " + t.Name + " failed"}
		}
		if e.Tool == "" {
			c := *e
			c.Tool = t.Name
			e = &c
		}
		return nil, e
	}
	if len(res) == 0 {
		res = json.RawMessage("null")
	}
	return res, nil
}

type auditCall struct {
	logArgs     bool
	seq         int
	attempt     int    // 1 unless the call was retried
	alias       string // the deprecated name the call used, if any
	omitted     int    // items left out of a cut result
	tool        string
	known       bool
	decision    string
	rule        string
	args        json.RawMessage
	resultBytes int
	dur         time.Duration
	err         *sandbox.Error
	rawError    bool // a DirectRaw tool's MCP result, served as is, had isError set

	// flow is the flow a rule that reads labels named (Decision.Flow).
	flow string
}

// rawIsError reports whether res, the JSON of an MCP CallToolResult that a
// DirectRaw tool returns to a direct caller, has isError set.
func rawIsError(res json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(res, &r) == nil && r.IsError
}

func (r *run) finishCall(a auditCall) {
	o := outOK
	if a.err != nil {
		o = outFailed
		if a.err.Code == sandbox.EToolDenied {
			o = outDenied
		}
	}
	r.mu.Lock()
	r.stats.Total++
	switch o {
	case outOK:
		r.stats.OK++
	case outFailed:
		r.stats.Failed++
	case outDenied:
		r.stats.Denied++
	}
	if a.known {
		r.stats.ByTool[a.tool]++
	}
	r.mu.Unlock()

	if r.b.obs != nil {
		tool := a.tool
		if !a.known {
			tool = "(unknown)"
		}
		r.b.obs.ObserveCall(tool, string(r.caller), [...]string{"ok", "failed", "denied"}[o], a.dur)
	}
	r.auditRecord(a)
}

// auditRecord writes the audit record of a call, or of one failed attempt
// of a call that is retried.
func (r *run) auditRecord(a auditCall) {
	if !r.b.audit.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	code := ""
	if a.err != nil && a.decision != "suspended" {
		// A suspended call waits for a person's answer: the E_CANCELLED
		// that ends its run is how suspension works, not its outcome.
		code = string(a.err.Code)
	}
	attrs := make([]slog.Attr, 0, 17)
	attrs = append(attrs,
		slog.String("run_id", r.id),
		slog.Int("seq", a.seq),
		slog.String("caller", string(r.caller)),
		slog.String("principal", r.principal.ID),
		slog.String("tool", a.tool),
		slog.String("decision", a.decision),
		slog.String("rule", a.rule),
		slog.String("code", code),
		slog.Float64("duration_ms", ms(a.dur)),
		slog.String("args_sha256", hashArgs(a.args)),
		slog.Int("result_bytes", a.resultBytes),
		slog.String("tier", r.tier),
		slog.Int("attempt", a.attempt),
	)
	if a.alias != "" {
		attrs = append(attrs, slog.String("alias", a.alias))
	}
	if a.omitted > 0 {
		attrs = append(attrs, slog.Int("omitted", a.omitted))
	}
	if a.flow != "" {
		attrs = append(attrs, slog.String("flow", sandbox.Cap(a.flow, MaxLoggedArgsBytes)))
	}
	if a.logArgs && a.args != nil {
		attrs = append(attrs, slog.String("args", sandbox.Cap(string(RedactJSON(a.args)), MaxLoggedArgsBytes)))
	}
	r.b.audit.LogAttrs(context.Background(), slog.LevelInfo, "call", attrs...)
}

// MaxLoggedArgsBytes caps the args field of an audit record (log_args).
const MaxLoggedArgsBytes = 4 << 10

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
	actx, cancel := context.WithTimeout(ctx, r.b.approval)
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
		return timedOut{deny(fmt.Sprintf("nobody approved the call to %s within %s", name, r.b.approval),
			"Ask the user to watch for the approval prompt, then try again.")}
	case err != nil:
		r.b.log.Warn("approval failed; denying", "tool", name, "err", err.Error())
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
	req.Message = fmt.Sprintf("Allow a call to %s for %s, made by %s?\nArguments: %s\n(policy rule %q requires approval)",
		name, who, from, req.ArgsSummary, d.Rule)
	if d.Flow != "" {
		req.Message += "\nThe program has read data from: " + sandbox.Cap(d.Flow, 1024)
	}
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

// snapshot returns a copy of the run's call stats.
func (r *run) snapshot() sandbox.CallStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.ByTool = maps.Clone(r.stats.ByTool)
	return s
}

func unknownTool(name string) *sandbox.Error {
	return &sandbox.Error{Code: sandbox.EToolUnknown, Tool: safeName(name),
		Message: fmt.Sprintf("no tool named %q is available", safeName(name)),
		Hint:    "Call only the tools listed in run_code's description (tools.<name>), or find one with search_tools."}
}

// renamedTool is the error of a call by an alias whose window has ended.
func renamedTool(old, name string) *sandbox.Error {
	return &sandbox.Error{Code: sandbox.EToolUnknown, Tool: old,
		Message: fmt.Sprintf("tool %q was renamed to %q; the old name no longer works", old, name),
		Hint:    fmt.Sprintf("Call %s instead (tools.%s(args) in a program), with the same arguments.", name, name)}
}

// safeName caps and cleans a guest-supplied tool name for messages and logs.
func safeName(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

func hashArgs(args json.RawMessage) string {
	if args == nil {
		return ""
	}
	h := sha256.Sum256(args)
	return hex.EncodeToString(h[:])
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
