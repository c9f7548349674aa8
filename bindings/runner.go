package bindings

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// RunnerConfig configures a Runner.
type RunnerConfig struct {
	// Broker answers the programs' tool calls. Required.
	Broker *Broker
	// Executor runs programs: an in-process engine or the process pool.
	// Required.
	Executor sandbox.Executor
	// Limits is the operator's ceiling. A request may lower a limit, never
	// raise it. Zero fields take the defaults of docs/limits.md; Timeout is
	// further capped at sandbox.MaxTimeout.
	Limits sandbox.Limits
	// Languages lists the languages the executor accepts. If empty, JavaScript
	// only.
	Languages []sandbox.Language
	// Tier names the executor's isolation for results and audit records
	// (e.g. "inprocess"). If empty, none is reported.
	Tier string
	// Modules keeps WebAssembly modules by hash for RunRequest.ModuleSHA256.
	// If nil, a store of 64 MiB.
	Modules *ModuleStore
	// KeepResultBytes is the largest result kept whole when it is over the
	// result budget (Limits.MaxResultBytes): the Result then shows its first
	// page and carries the rest in Result.Whole, for paging. If zero,
	// sandbox.MaxKeptResultBytes (8 MiB, also the ceiling); if negative,
	// a result over the budget fails with E_OUTPUT_LIMIT.
	KeepResultBytes int
	// KeepLogBytes is how much console output is kept when the logs are
	// over their budget (Limits.MaxLogBytes): the Result then shows what
	// fits and carries the whole in Result.WholeLogs, for paging. The
	// engine's flood guard moves with it (E_OUTPUT_LIMIT 1 MiB past it). If
	// zero, sandbox.MaxKeptLogBytes (1 MiB, also the ceiling); if negative,
	// output past the budget is dropped.
	KeepLogBytes int
}

// Runner runs programs for run_code and the CLI: it resolves limits, binds
// the tools the policy exposes to code, runs the program under a deadline
// with a per-run Host from the broker, and assembles the Result.
type Runner struct {
	broker   *Broker
	exec     sandbox.Executor
	limits   sandbox.Limits
	langs    []sandbox.Language
	tier     string
	mods     *ModuleStore
	keep     int // Job.KeepResultBytes
	keepLogs int
}

// NewRunner returns a Runner for cfg.
func NewRunner(cfg RunnerConfig) (*Runner, error) {
	if cfg.Broker == nil || cfg.Executor == nil {
		return nil, errors.New("bindings: RunnerConfig needs a Broker and an Executor")
	}
	l := cfg.Limits.Resolve()
	if l.Timeout > sandbox.MaxTimeout {
		l.Timeout = sandbox.MaxTimeout
	}
	langs := cfg.Languages
	if len(langs) == 0 {
		langs = []sandbox.Language{sandbox.JavaScript}
	}
	mods := cfg.Modules
	if mods == nil {
		mods = NewModuleStore(0)
	}
	keep := keepBytes(cfg.KeepResultBytes, sandbox.MaxKeptResultBytes)
	keepLogs := keepBytes(cfg.KeepLogBytes, sandbox.MaxKeptLogBytes)
	return &Runner{broker: cfg.Broker, exec: cfg.Executor, limits: l, tier: cfg.Tier, mods: mods, keep: keep,
		keepLogs: keepLogs, langs: append([]sandbox.Language(nil), langs...)}, nil
}

// keepBytes reads a RunnerConfig.Keep… field: 0 (unset) or over most
// means most; negative means nothing is kept.
func keepBytes(n, most int) int {
	switch {
	case n == 0 || n > most:
		return most
	case n < 0:
		return 0
	}
	return n
}

// Limits returns the operator's ceiling.
func (r *Runner) Limits() sandbox.Limits { return r.limits }

// Languages returns the languages the runner accepts.
func (r *Runner) Languages() []sandbox.Language { return append([]sandbox.Language(nil), r.langs...) }

// Tier returns the name of the runner's isolation tier.
func (r *Runner) Tier() string { return r.tier }

// Broker returns the runner's broker.
func (r *Runner) Broker() *Broker { return r.broker }

// RunRequest is one program to run.
type RunRequest struct {
	Program sandbox.Program
	// Limits requested for this run; zero fields take the ceiling's values.
	Limits    sandbox.Limits
	Principal Principal
	// ModuleSHA256 names a WebAssembly module the server already holds
	// (one sent before in Program.Module), when Program.Module is empty.
	ModuleSHA256 string
	// Progress, if set, is called when a tool call starts, when one
	// finishes and when the program stores a value with progress(value),
	// with a snapshot of the run. It is called from the goroutine where
	// that happened, possibly from several at once, and must not block.
	Progress func(RunProgress)
	// Approver asks a person about calls whose policy rule requires an
	// approval. If nil, such calls are denied. Approvals wait within the
	// run's own time limit.
	Approver Approver
	// WholeResult returns a result that is over the result budget (up to
	// RunnerConfig.KeepResultBytes) whole in Result.Result instead of cut
	// into a first page, and logs over their budget (up to
	// RunnerConfig.KeepLogBytes) whole in Result.Logs: for local callers,
	// like the CLI, that print them rather than hand them to a model.
	WholeResult bool
	// Seed and Clock fix Math.random and Date for a JavaScript run (see
	// sandbox.Job.Seed): a run resumed by replay gets the ones of its
	// first attempt.
	Seed  uint64
	Clock time.Time
	// Suspend makes the run resumable without a session (MCP 2026-07-28):
	// a call that needs a person's approval is not asked about; the run
	// lets its calls in flight finish and stops, and RunResumable returns
	// a Suspension to resume it from (see Replay).
	Suspend bool
	// Replay resumes a suspended run: see Replay. The request must carry
	// the same Program, Principal, Seed and Clock as the suspended one.
	Replay *Replay
}

// RunProgress is a snapshot of a run in progress (RunRequest.Progress).
type RunProgress struct {
	// Seq orders snapshots: snapshots may reach the callback out of order
	// from several goroutines, and the one with the largest Seq is the
	// newest.
	Seq uint64
	// Calls counts the calls finished so far.
	Calls sandbox.CallStats
	// InFlight counts the calls started and not finished: waiting for
	// authorization, an approval, an in-flight slot or the tool itself.
	InFlight int
	// Elapsed is the time since the run started.
	Elapsed time.Duration
	// Partials counts the values stored with progress(value) so far, and
	// PartialBytes is the size of the latest one.
	Partials     int
	PartialBytes int
	// Tools is what the tools of calls in flight reported of their own
	// progress (an upstream server's notifications/progress), oldest call
	// first, at most MaxToolProgress of them.
	Tools []ToolProgress
}

// ToolProgress is one call's progress as its tool reported it.
type ToolProgress struct {
	Tool     string // the name the program called
	Progress float64
	Total    float64 // 0: unknown
	Message  string  // escaped (Visible) and capped at 80 bytes
}

// MaxToolProgress caps RunProgress.Tools.
const MaxToolProgress = 3

// String is "github_search: 40/100 (indexing)".
func (t ToolProgress) String() string {
	s := t.Tool + ": " + strconv.FormatFloat(t.Progress, 'g', -1, 64)
	if t.Total > 0 {
		s += "/" + strconv.FormatFloat(t.Total, 'g', -1, 64)
	}
	if t.Message != "" {
		s += " (" + t.Message + ")"
	}
	return s
}

// Text describes the snapshot for a person, at elapsed since the run
// started (later than Elapsed when a snapshot is shown again while nothing
// changes): "12 calls done (11 ok, 1 failed), 3 in flight, 2.5s elapsed;
// progress saved once".
func (p RunProgress) Text(elapsed time.Duration) string {
	c := p.Calls
	noun := "calls"
	if c.Total == 1 {
		noun = "call"
	}
	msg := fmt.Sprintf("%d %s done (%d ok, %d failed", c.Total, noun, c.OK, c.Failed)
	if c.Denied > 0 {
		msg += fmt.Sprintf(", %d denied", c.Denied)
	}
	msg += fmt.Sprintf("), %d in flight, %.1fs elapsed", p.InFlight, elapsed.Seconds())
	switch p.Partials {
	case 0:
	case 1:
		msg += "; progress saved once"
	default:
		msg += fmt.Sprintf("; progress saved %d times", p.Partials)
	}
	for i, t := range p.Tools {
		sep := ", "
		if i == 0 {
			sep = "; "
		}
		msg += sep + t.String()
	}
	return msg
}

// runHost is the Host a program runs against: the broker's per-run state,
// which authorizes and performs each call, plus what the runner tracks for
// progress reports and partial results.
type runHost struct {
	*run
	report func(RunProgress)

	inflight atomic.Int64

	mu       sync.Mutex // guards seq, partial, partials, calls and progress
	seq      uint64
	partial  json.RawMessage
	partials int
	// calls numbers the calls; progress holds, for each call in flight,
	// what its tool last reported of its progress (nil: nothing yet).
	calls    uint64
	progress map[uint64]*ToolProgress

	groupMu sync.Mutex
	group   *startedGroup // of the latest context StartCall was given
}

// track registers a call in flight and returns its context, under which
// the tool's progress reports (tools.ReportProgress) reach the run's
// progress, and the function that ends the registration.
func (h *runHost) track(ctx context.Context, tool string) (context.Context, func()) {
	if h.report == nil {
		return ctx, func() {}
	}
	h.mu.Lock()
	h.calls++
	id := h.calls
	if h.progress == nil {
		h.progress = make(map[uint64]*ToolProgress)
	}
	h.progress[id] = nil
	h.mu.Unlock()
	name := safeName(tool)
	ctx = tools.WithProgress(ctx, func(p tools.Progress) {
		h.mu.Lock()
		if _, ok := h.progress[id]; !ok {
			h.mu.Unlock()
			return // the call has returned: too late
		}
		h.progress[id] = &ToolProgress{Tool: name, Progress: p.Progress, Total: p.Total,
			Message: sandbox.Cap(Visible(p.Message), 80)}
		h.mu.Unlock()
		h.notify()
	})
	return ctx, func() {
		h.mu.Lock()
		delete(h.progress, id)
		h.mu.Unlock()
	}
}

// toolProgress returns what the calls in flight reported, oldest first.
// h.mu is held.
func (h *runHost) toolProgress() []ToolProgress {
	var ids []uint64
	for id, p := range h.progress {
		if p != nil {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	out := make([]ToolProgress, 0, min(len(ids), MaxToolProgress))
	for _, id := range ids[:min(len(ids), MaxToolProgress)] {
		out = append(out, *h.progress[id])
	}
	return out
}

var (
	_ sandbox.Host        = (*runHost)(nil)
	_ sandbox.PartialSink = (*runHost)(nil)
)

// Call implements sandbox.Host, counting the call in flight around the
// broker's path. When ctx ends first (the run was cancelled or timed out)
// and the call has not returned abandonGrace later, Call returns
// E_CANCELLED rather than wait for a tool handler that does not honour its
// context: the engine waits for its calls before it reports, and a run must
// end promptly whatever its tools do. Such a call finishes in the
// background; it is audited when it returns, too late to be counted in the
// Result.
func (h *runHost) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	h.inflight.Add(1)
	h.notify()
	type answer struct {
		res json.RawMessage
		err error
	}
	ch := make(chan answer, 1)
	cctx, untrack := h.track(ctx, tool)
	goCall(func() { // a reused goroutine (stack.go)
		res, err := h.run.Call(cctx, tool, args)
		untrack()
		h.inflight.Add(-1)
		h.notify()
		ch <- answer{res, err}
	})
	select {
	case a := <-ch:
		return a.res, a.err
	case <-ctx.Done():
		// A handler that honours its context returns within microseconds:
		// wait a little, so that its call is counted.
		t := time.NewTimer(abandonGrace)
		defer t.Stop()
		select {
		case a := <-ch:
			return a.res, a.err
		case <-t.C:
			h.b.log.Warn("a tool call did not return after its run ended; not waiting for it",
				"run_id", h.id, "tool", safeName(tool))
			return nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled)
		}
	}
}

// abandonGrace is how long a call may take to return once its run has
// ended before the run stops waiting for it.
const abandonGrace = 50 * time.Millisecond

var _ sandbox.AsyncHost = (*runHost)(nil)

// StartCall implements sandbox.AsyncHost: Call without a goroutine of the
// caller's waiting for the answer. done gets the call's result on the call
// goroutine that ran it or, when ctx ends first and the call has not
// returned abandonGrace later, E_CANCELLED (the call then finishes in the
// background, as with Call).
func (h *runHost) StartCall(ctx context.Context, tool string, args json.RawMessage, done func(json.RawMessage, error)) {
	h.inflight.Add(1)
	h.notify()
	cctx, untrack := h.track(ctx, tool)
	c := &startedCall{tool: tool, done: done}
	h.startedUnder(ctx, c)
	goCall(func() {
		res, err := h.run.Call(cctx, tool, args)
		untrack()
		h.inflight.Add(-1)
		h.notify()
		c.answer(res, err)
	})
}

// startedCall is a call made through StartCall: answered once, by
// whichever comes first, the call or its abandonment.
type startedCall struct {
	answered atomic.Bool
	tool     string
	done     func(json.RawMessage, error)
}

func (c *startedCall) answer(res json.RawMessage, err error) bool {
	if !c.answered.CompareAndSwap(false, true) {
		return false
	}
	c.done(res, err)
	return true
}

// startedGroup holds the calls started under one context (one Done
// channel: the engine or the pool passes the same one for every call of a
// run), so that one context.AfterFunc per context, not one per call,
// abandons those still running abandonGrace after it ends.
type startedGroup struct {
	done  <-chan struct{}
	mu    sync.Mutex
	calls []*startedCall
	ended bool // the context has ended: a call started now is on its own
}

// startedUnder registers c with the group of ctx.
func (h *runHost) startedUnder(ctx context.Context, c *startedCall) {
	dc := ctx.Done()
	if dc == nil {
		return // a context that never ends: nothing to abandon
	}
	h.groupMu.Lock()
	g := h.group
	if g == nil || g.done != dc {
		g = &startedGroup{done: dc}
		h.group = g
		context.AfterFunc(ctx, func() {
			// Usually every call has been answered by then: no timer.
			g.mu.Lock()
			g.ended = true
			g.calls = slices.DeleteFunc(g.calls, func(c *startedCall) bool { return c.answered.Load() })
			running := len(g.calls) > 0
			g.mu.Unlock()
			if running {
				time.AfterFunc(abandonGrace, func() { h.abandon(ctx, g) })
			}
		})
	}
	h.groupMu.Unlock()
	g.mu.Lock()
	if g.ended { // started after the context ended: on its own
		g.mu.Unlock()
		late := &startedGroup{calls: []*startedCall{c}}
		time.AfterFunc(abandonGrace, func() { h.abandon(ctx, late) })
		return
	}
	if len(g.calls) == cap(g.calls) && len(g.calls) >= 64 {
		// Drop the answered ones before the slice grows.
		g.calls = slices.DeleteFunc(g.calls, func(c *startedCall) bool { return c.answered.Load() })
	}
	g.calls = append(g.calls, c)
	g.mu.Unlock()
}

// abandon answers the calls of g still running E_CANCELLED.
func (h *runHost) abandon(ctx context.Context, g *startedGroup) {
	g.mu.Lock()
	calls := g.calls
	g.calls = nil
	g.mu.Unlock()
	for _, c := range calls {
		if c.answer(nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled)) {
			h.b.log.Warn("a tool call did not return after its run ended; not waiting for it",
				"run_id", h.id, "tool", safeName(c.tool))
		}
	}
}

// Flush implements sandbox.AsyncHost: StartCall holds nothing back.
func (h *runHost) Flush() {}

// Partial implements sandbox.PartialSink: the last value stored wins.
func (h *runHost) Partial(value json.RawMessage) {
	h.mu.Lock()
	h.partial = bytes.Clone(value)
	h.partials++
	h.mu.Unlock()
	h.notify()
}

// lastPartial returns the last value stored, or nil.
func (h *runHost) lastPartial() json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.partial
}

// notify reports a snapshot, if anyone listens.
func (h *runHost) notify() {
	if h.report == nil {
		return
	}
	h.mu.Lock()
	h.seq++
	p := RunProgress{Seq: h.seq, Calls: h.snapshot(), InFlight: int(h.inflight.Load()),
		Elapsed: time.Since(h.start), Partials: h.partials, PartialBytes: len(h.partial),
		Tools: h.toolProgress()}
	h.mu.Unlock()
	h.report(p)
}

// Run runs one program and always returns a Result; a failed program is a
// Result with OK false and an Error, never a Go error.
func (r *Runner) Run(ctx context.Context, req RunRequest) *sandbox.Result {
	res, _ := r.RunResumable(ctx, req)
	return res
}

// RunResumable is Run for a request that may suspend (RunRequest.Suspend):
// a suspended run returns its Result (E_CANCELLED) and a Suspension to
// keep; any other run returns a nil Suspension.
func (r *Runner) RunResumable(ctx context.Context, req RunRequest) (*sandbox.Result, *Suspension) {
	start := time.Now()
	id := newRunID()
	ctx, span := r.startRunSpan(ctx, id, req.Program.Language)
	lim := r.requestLimits(req.Limits)
	h := &runHost{run: &run{b: r.broker, id: id, principal: req.Principal, caller: tools.Code,
		limits: lim, start: start, approver: req.Approver, tier: r.tier}, report: req.Progress}
	h.init()
	if req.Suspend || req.Replay != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		h.run.rp = newReplayState(req.Replay, req.Suspend, cancel)
	}
	if req.Principal.ID == "" {
		h.principal = LocalPrincipal
	}

	var out *sandbox.Outcome
	if err := r.resolveModule(&req, h.principal.ID); err != nil {
		out = &sandbox.Outcome{Err: err}
	} else if lang := req.Program.Language; lang != "" && !r.accepts(lang) {
		out = &sandbox.Outcome{Err: &sandbox.Error{Code: sandbox.ESyntax,
			Message: "language " + safeName(string(lang)) + " is not enabled on this server",
			Hint:    "Submit JavaScript (language \"javascript\")."}}
	} else {
		if req.Program.Language == "" {
			req.Program.Language = sandbox.JavaScript
		}
		bound := r.broker.Exposed(tools.Code, h.principal)
		names := make([]string, 0, len(bound))
		for _, t := range bound {
			names = append(names, t.Name)
		}
		// Deprecated aliases are bound too (never listed), so a program
		// written against an old name keeps working through its window
		// and afterwards gets E_TOOL_UNKNOWN naming the new one.
		for _, t := range bound {
			for _, a := range t.Aliases {
				names = append(names, a.Name)
			}
		}
		// The engine keeps logs up to the keep; the budget applies below.
		jobLim := lim
		jobLim.MaxLogBytes = max(lim.MaxLogBytes, r.keepLogs)
		job := &sandbox.Job{RunID: id, Program: req.Program, Limits: jobLim, Tools: names, KeepResultBytes: r.keep,
			Principal: h.principal.ID, Seed: req.Seed, Clock: req.Clock}
		// No deadline here: executors enforce job.Limits.Timeout from the
		// moment the program starts, so time spent waiting for a worker does
		// not eat the program's own budget.
		out = r.exec.Execute(ctx, job, h)
		if out == nil {
			out = &sandbox.Outcome{Err: sandbox.Errorf(sandbox.EInternal, "", "the engine returned no outcome")}
		}
	}

	res := &sandbox.Result{
		OK:         out.Err == nil,
		Result:     out.Value,
		Logs:       out.Logs,
		Calls:      h.snapshot(),
		Truncated:  out.LogsTruncated,
		DurationMS: ms(time.Since(start)),
		RunID:      id,
		Tier:       r.tier,
		Error:      redactError(out.Err),
	}
	// JSON text is UTF-8 (RFC 8259), and the engines' checks (json.Valid,
	// json.Compact) do not look inside strings: a WebAssembly guest or a
	// worker could hand over raw bytes that no client can read, and that
	// read_output could not page exactly.
	if res.OK && !utf8.Valid(res.Result) {
		res.OK, res.Result = false, nil
		res.Error = &sandbox.Error{Code: sandbox.EResultInvalid, Message: "the result is not valid UTF-8",
			Hint: "Return JSON text encoded as UTF-8 (set_result takes the UTF-8 bytes of one JSON value)."}
	}
	// The broker's notes (a cut tool output, a deprecated name) follow
	// the program's own logs.
	res.Logs = append(res.Logs, h.logNotes()...)
	if res.Logs == nil {
		res.Logs = []string{}
	}
	if !res.OK || len(res.Result) == 0 {
		res.Result = json.RawMessage("null")
	}
	if !res.OK {
		// What the program saved of its work is reported with the error.
		res.Partial = out.Partial
		if res.Partial == nil {
			res.Partial = h.lastPartial()
		}
		if !utf8.Valid(res.Partial) {
			res.Partial = nil
		}
	}
	if res.OK && len(res.Result) > lim.MaxResultBytes && !req.WholeResult {
		cutResult(res, lim.MaxResultBytes)
	}
	if !req.WholeResult {
		cutLogs(res, lim.MaxLogBytes)
	}
	label, sources := h.Label()
	res.Meta = LabelMeta(label, sources)
	var susp *Suspension
	if h.run.rp != nil {
		if susp = h.run.rp.suspension(); susp != nil {
			susp.RunID = id
		}
	}
	r.auditRun(res, h.principal, label, susp, req.Replay)
	endRunSpan(span, res)
	return res, susp
}

// cutResult replaces a result over its budget of max bytes with its first
// page: a JSON string holding the longest prefix of its compact JSON (cut
// at a character boundary) whose encoding fits in max bytes. The whole
// result moves to res.Whole.
func cutResult(res *sandbox.Result, max int) {
	whole := res.Result
	n := prefixFitting(whole, max)
	page, _ := marshalString(whole[:n])
	for len(page) > max && n > 0 { // prefixFitting's count is exact; this is a guard
		n = utf8Floor(whole, n*9/10)
		page, _ = marshalString(whole[:n])
	}
	res.Whole = whole
	res.Result = page
	res.Truncated = true
	res.OutputBytes = len(whole)
	res.OutputNextOffset = n
}

// cutLogs cuts logs over their budget of max bytes as the engines do
// (entries that fit, then the start of the next one at a character
// boundary) and keeps the whole output, one entry per line, in
// res.WholeLogs.
func cutLogs(res *sandbox.Result, max int) {
	total := 0
	for _, e := range res.Logs {
		total += logCost(e)
	}
	if total <= max {
		return
	}
	var kept []string
	used := 0
	for _, e := range res.Logs {
		if used+logCost(e) <= max {
			kept = append(kept, e)
			used += logCost(e)
			continue
		}
		if room := max - used; room > 0 {
			kept = append(kept, e[:utf8Floor([]byte(e), room)])
		}
		break
	}
	whole := strings.Join(res.Logs, "\n")
	res.WholeLogs = []byte(whole)
	res.LogsBytes = len(whole)
	res.LogsNextOffset = len(strings.Join(kept, "\n"))
	res.Logs = kept
	res.Truncated = true
}

// logCost is what a log entry takes from the log budget: its bytes, and at
// least one, as in the engines, so that a flood of empty entries is cut too.
func logCost(e string) int { return max(len(e), 1) }

// prefixFitting returns the length of the longest prefix of b, ending at a
// character boundary, whose JSON string encoding (quotes included, no HTML
// escaping) takes at most max bytes.
func prefixFitting(b []byte, max int) int {
	size := 2 // the quotes
	i := 0
	for i < len(b) {
		c, w := utf8.DecodeRune(b[i:])
		var enc int
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
			enc = 2
		case c < 0x20 || c == 0x2028 || c == 0x2029 || (c == utf8.RuneError && w == 1):
			enc = 6
		default:
			enc = w
		}
		if size+enc > max {
			break
		}
		size += enc
		i += w
	}
	return i
}

// utf8Floor moves n back to the start of a character of b.
func utf8Floor(b []byte, n int) int {
	for n > 0 && n < len(b) && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

// marshalString is the JSON string encoding of b, without HTML escaping.
func marshalString(b []byte) (json.RawMessage, error) { return sandbox.MarshalJSON(string(b)) }

// resolveModule keeps a submitted module by hash for the principal owner,
// or finds the one owner sent named by ModuleSHA256.
func (r *Runner) resolveModule(req *RunRequest, owner string) *sandbox.Error {
	if req.Program.Language != sandbox.WASM {
		return nil
	}
	if len(req.Program.Module) > 0 {
		sha := r.mods.PutFor(owner, req.Program.Module)
		if req.ModuleSHA256 != "" && req.ModuleSHA256 != sha {
			return &sandbox.Error{Code: sandbox.EModuleInvalid, Message: "module_sha256 does not match the module's SHA-256",
				Hint: "Send either the module or its hash; the hash is the lower-case hex SHA-256 of the module bytes."}
		}
		return nil
	}
	if req.ModuleSHA256 == "" {
		return &sandbox.Error{Code: sandbox.EModuleInvalid, Message: "a wasm program needs a module",
			Hint: "Send the module in module_base64, or name one sent before with module_sha256."}
	}
	m, ok, err := r.mods.FetchFor(owner, req.ModuleSHA256)
	if err != nil {
		return &sandbox.Error{Code: sandbox.EInternal, Message: "the server's shared store is unavailable, so the module named by module_sha256 could not be loaded",
			Hint: "Send the module itself in module_base64, or retry in a few seconds."}
	}
	if !ok {
		// The same answer whether nobody sent it or another principal did.
		return &sandbox.Error{Code: sandbox.EModuleInvalid, Message: "you have sent no module with that module_sha256",
			Hint: "Send the module once in module_base64; afterwards its hash is enough."}
	}
	req.Program.Module = m
	return nil
}

func (r *Runner) requestLimits(req sandbox.Limits) sandbox.Limits {
	if req.Timeout > r.limits.Timeout {
		req.Timeout = r.limits.Timeout
	}
	zeroToCeiling := func(v *int, c int) {
		if *v <= 0 {
			*v = c
		}
	}
	if req.Timeout <= 0 {
		req.Timeout = r.limits.Timeout
	}
	if req.MemoryBytes <= 0 {
		req.MemoryBytes = r.limits.MemoryBytes
	}
	zeroToCeiling(&req.MaxCalls, r.limits.MaxCalls)
	zeroToCeiling(&req.MaxInFlight, r.limits.MaxInFlight)
	zeroToCeiling(&req.MaxResultBytes, r.limits.MaxResultBytes)
	zeroToCeiling(&req.MaxLogBytes, r.limits.MaxLogBytes)
	zeroToCeiling(&req.MaxSourceBytes, r.limits.MaxSourceBytes)
	zeroToCeiling(&req.MaxModuleBytes, r.limits.MaxModuleBytes)
	zeroToCeiling(&req.MaxStackFrames, r.limits.MaxStackFrames)
	return req.Within(r.limits)
}

func (r *Runner) accepts(l sandbox.Language) bool {
	for _, x := range r.langs {
		if x == l {
			return true
		}
	}
	return false
}

// auditRun records a run's outcome. A suspended run (susp) is audited as
// "suspended", waiting for a person's answer about its pending call, not
// as the E_CANCELLED that ended its attempt; a replay names the run it
// resumes (resumed_from) and is audited with its own outcome.
func (r *Runner) auditRun(res *sandbox.Result, p Principal, label policy.Label, susp *Suspension, rp *Replay) {
	code := ""
	if res.Error != nil {
		code = string(res.Error.Code)
	}
	decision := "ok"
	if !res.OK {
		decision = "error"
	}
	var extra []slog.Attr
	if susp != nil {
		decision, code = "suspended", ""
		extra = append(extra, slog.String("waiting_for", "approval"), slog.String("pending_tool", susp.Pending.Tool))
	}
	if rp != nil && rp.From != "" {
		extra = append(extra, slog.String("resumed_from", rp.From))
	}
	if o := r.broker.obs; o != nil {
		o.ObserveRun(decision, code, time.Duration(res.DurationMS*float64(time.Millisecond)))
	}
	a := r.broker.audit
	if !a.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{
		slog.String("run_id", res.RunID),
		slog.Int("seq", 0),
		slog.String("caller", string(tools.Code)),
		slog.String("principal", p.ID),
		slog.String("tool", "run_code"),
		slog.String("decision", decision),
		slog.String("rule", ""),
		slog.String("code", code),
		slog.Float64("duration_ms", res.DurationMS),
		slog.Int("calls", res.Calls.Total),
		slog.String("tier", res.Tier),
		slog.Int("result_bytes", max(len(res.Result), len(res.Whole))),
		slog.String("label", label.String()),
	}
	a.LogAttrs(context.Background(), slog.LevelInfo, "run", append(attrs, extra...)...)
}

func newRunID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "run_" + hex.EncodeToString(b[:])
}
