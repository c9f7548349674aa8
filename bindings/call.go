package bindings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

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
	depth     int          // 0 for run_code and direct calls; n inside a program called at depth n-1 (programs.go)
	plan      *runPlan     // the program's plan; nil when none was read (plan.go)
	tree      *callTree    // the calls of the run and of the program tools it runs; nil: its own only (programs.go)

	seq atomic.Int64

	flow runFlow // information-flow label of what the program read (flow.go)

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
func (r *run) Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if name == sandbox.PlanCall { // the engine hands the program's plan (plan.go): no call
		res, e := r.receivePlan(ctx, args)
		if e != nil {
			return nil, e
		}
		return res, nil
	}
	return r.call(ctx, r.issue(), name, args)
}

// issue numbers a call in the order the program made it (its seq, from
// 1) and, in a resumable run, counts it in until it returns (replay.go):
// called when the engine hands the call over, before the call goes to a
// goroutine of its own (runHost.StartCall), so that the numbers follow
// the program's order whatever the scheduling, and a run that suspends
// waits for every call the program made before the pending one.
func (r *run) issue() int {
	if r.rp != nil {
		r.rp.enter()
	}
	return int(r.seq.Add(1))
}

// issueFor is issue for a call of tool handed over by the engine, and 0
// for what is not a call (the program's plan, sandbox.PlanCall).
func (r *run) issueFor(tool string) int {
	if tool == sandbox.PlanCall {
		return 0
	}
	return r.issue()
}

// callIssued is Call for what issueFor numbered seq.
func (r *run) callIssued(ctx context.Context, seq int, name string, args json.RawMessage) (json.RawMessage, error) {
	if seq == 0 {
		return r.Call(ctx, name, args)
	}
	return r.call(ctx, seq, name, args)
}

// call is Call for a call that issue numbered seq.
func (r *run) call(ctx context.Context, seq int, name string, args json.RawMessage) (res json.RawMessage, err error) {
	if r.rp != nil { // a resumable run: it suspends only once no call is left
		defer r.rp.leave()
	}
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

	if seq > r.limits.MaxCalls || !r.tree.take() { // tree: with its program tools' calls (programs.go)
		rec.decision = "limit"
		return nil, &sandbox.Error{Code: sandbox.EToolCallLimit, Tool: safeName(name),
			Message: fmt.Sprintf("the run made more than %d tool calls", r.limits.MaxCalls),
			Hint:    "Batch the work into fewer calls, or filter before calling."}
	}
	if sres, serr, ok := r.stateCall(ctx, seq, name, args, &rec); ok { // state.go
		if serr != nil {
			return nil, serr
		}
		return sres, nil
	}
	name, opaque, hres, herr, done := r.handleCall(name, args, &rec)
	if done {
		if herr != nil {
			return nil, herr
		}
		return hres, nil
	}
	t, alias, ok := r.b.cfg.Catalog.Resolve(name)
	if !ok && r.b.waitPending(ctx, name) { // its source was starting
		t, alias, ok = r.b.cfg.Catalog.Resolve(name)
	}
	if !ok {
		rec.decision = "unknown"
		return nil, r.b.missingTool(name, r.caller, r.principal)
	}
	if !r.b.visible(t, r.principal) { // another principal's saved program (programs.go)
		rec.decision = "unknown"
		return nil, r.b.hiddenTool(name, r.caller, r.principal)
	}
	if alias.Name != "" {
		rec.alias = alias.Name
		if !alias.Live(r.b.cfg.Now()) {
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
	if r.rp != nil { // a replay compares the calls in the program's order
		if e := r.rp.compare(seq, t.Name, args); e != nil {
			rec.decision = "diverged"
			return nil, e
		}
	}

	if e := r.plan.checkCall(ctx, r.b, t, r.principal); e != nil { // plan.go
		rec.decision, rec.rule = "deny", e.Rule
		return nil, e
	}
	info := &CallInfo{Caller: r.caller, Tool: t, Args: args, Principal: r.principal,
		RunID: r.id, Seq: seq, Elapsed: time.Since(r.start), Plan: r.plan.shown(), Depth: r.depth, run: r}
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
	// learns nothing of the tool's schema from an E_TOOL_ARGS message. Its
	// message never quotes a handle's content, and it carries the text
	// label of the tool's schema (its server wrote it).
	if err := t.Validate(args); err != nil {
		rec.decision = "invalid"
		r.labelText(t, seq)
		return nil, hl.hideHandles(sandbox.AsError(err, sandbox.EToolArgs))
	}
	rec.decision = "allow"
	var e *sandbox.Error
	replayed := false
	if r.rp != nil { // a resumable run (replay.go)
		res, e, replayed = r.rp.answer(seq)
		if replayed {
			rec.decision = "replayed"
		} else if err := r.rpApproval(ctx, seq, info, d, args, &rec); err != nil {
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
	dctx, text := r.withTextSources(dctx, t)
	switch {
	case replayed:
	case r.rp != nil:
		res, e = r.rp.dispatch(dctx, seq, t.Name, args, func() (json.RawMessage, *sandbox.Error) {
			return r.dispatchRetrying(dctx, t, args, info, &rec)
		})
	default:
		res, e = r.dispatchRetrying(dctx, t, args, info, &rec)
	}
	// An error's text is the tool's data too; both carry the labels of the
	// handles the call was given, and of the text it returns about other
	// tools (discovery).
	label := r.labelResult(t, seq, meta, !opaque || e != nil, &hl, text)
	if e != nil {
		return nil, e
	}
	if t.DirectRaw && r.caller == tools.Direct {
		rec.rawError = rawIsError(res) // served as is, but a failed call
	}
	budget := t.OutputBudget
	if budget <= 0 {
		budget = r.b.cfg.MaxOutputBytes
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
// an idempotent tool: at most b.cfg.MaxRetries more times, after a jittered
// backoff, never past ctx's deadline. The call holds an in-flight slot only
// while its handler runs, not while it waits to retry, so a backoff never
// blocks the run's other calls. The policy decided once, for the logical
// call, and the call counts once against the run's limits; each failed
// attempt that is retried gets its own audit record (with its attempt
// number), and the retries are counted in CallStats.Retries.
func (r *run) dispatchRetrying(ctx context.Context, t *tools.Tool, args json.RawMessage, info *CallInfo, rec *auditCall) (json.RawMessage, *sandbox.Error) {
	retry := t.Effects.Idempotent && r.b.cfg.MaxRetries > 0
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
		if !retry || attempt > r.b.cfg.MaxRetries || !e.Retryable || e.Code != sandbox.EToolFailed {
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
	d := b.cfg.RetryBackoff << (2 * (attempt - 1))
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
	cctx, cancel := context.WithTimeout(ctx, r.b.cfg.CallTimeout)
	defer cancel()
	res, e := r.b.dispatch(tools.WithCall(cctx, info), t, args)
	if e != nil {
		if ctx.Err() != nil { // the run ended, not the tool
			return nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled)
		}
		if cctx.Err() != nil {
			return nil, &sandbox.Error{Code: sandbox.EToolFailed, Tool: t.Name, Retryable: true,
				Reason:  sandbox.ReasonTransient,
				Message: fmt.Sprintf("tool %s did not answer within %s", t.Name, r.b.cfg.CallTimeout),
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
			b.cfg.Logger.Error("authorizer panicked; denying", "tool", info.Tool.Name, "panic", fmt.Sprint(p))
			d = Decision{Rule: "authorizer.panic", Reason: "the authorizer failed",
				Message: "the policy could not be evaluated, so the call is denied"}
		}
	}()
	if b.cfg.Shared != nil {
		ctx = context.WithValue(ctx, rateStoreKey{}, sharedRates{b.cfg.Shared})
	}
	return b.authorizer().Authorize(ctx, info)
}

// dispatch runs the handler, turning a panic or a bare Go error into an
// *sandbox.Error that leaks nothing.
func (b *Broker) dispatch(ctx context.Context, t *tools.Tool, args json.RawMessage) (res json.RawMessage, err *sandbox.Error) {
	defer func() {
		if p := recover(); p != nil {
			b.cfg.Logger.Error("tool panicked", "tool", t.Name, "panic", fmt.Sprint(p))
			res, err = nil, &sandbox.Error{Code: sandbox.EToolFailed, Tool: t.Name,
				Message: "tool " + t.Name + " failed with an internal error"}
		}
	}()
	res, herr := t.Handler(ctx, args)
	if herr != nil {
		var e *sandbox.Error
		if !errors.As(herr, &e) {
			b.cfg.Logger.Warn("tool failed", "tool", t.Name, "err", herr.Error())
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
