package bindings

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
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
	// ProgramExecutor runs the programs that program tools run (programs.go).
	// If nil, Executor.
	ProgramExecutor sandbox.Executor
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
	progExec sandbox.Executor // RunnerConfig.ProgramExecutor, else exec
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
	progExec := cfg.ProgramExecutor
	if progExec == nil {
		progExec = cfg.Executor
	}
	return &Runner{broker: cfg.Broker, exec: cfg.Executor, limits: l, tier: cfg.Tier, mods: mods, keep: keep,
		keepLogs: keepLogs, langs: append([]sandbox.Language(nil), langs...), progExec: progExec}, nil
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
		limits: lim, start: start, approver: req.Approver, tier: r.tier, tree: newCallTree(lim.MaxCalls)}, report: req.Progress}
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
	var refused *sandbox.Error
	if err := r.resolveModule(&req, h.principal.ID); err != nil {
		out = &sandbox.Outcome{Err: err}
	} else if lang := req.Program.Language; lang != "" && !r.accepts(lang) {
		out = &sandbox.Outcome{Err: &sandbox.Error{Code: sandbox.ESyntax,
			Message: "language " + safeName(string(lang)) + " is not enabled on this server",
			Hint:    "Submit JavaScript (language \"javascript\")."}}
	} else if h.plan, refused = r.broker.planRun(ctx, req.Program, h.principal, tools.Code, ""); refused != nil {
		out = &sandbox.Outcome{Err: refused} // plan.go: refused before any call
	} else {
		if req.Program.Language == "" {
			req.Program.Language = sandbox.JavaScript
		}
		// Deprecated aliases are bound too (never listed): boundNames.
		names := r.broker.boundNames(h.principal)
		// The engine keeps logs up to the keep; the budget applies below.
		jobLim := lim
		jobLim.MaxLogBytes = max(lim.MaxLogBytes, r.keepLogs)
		job := &sandbox.Job{RunID: id, Program: req.Program, Limits: jobLim, Tools: names, KeepResultBytes: r.keep,
			Principal: h.principal.ID, Seed: req.Seed, Clock: req.Clock, SendPlan: req.Program.Language != sandbox.WASM}
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
		Plan:       h.plan.shown(),
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
	code, rule := "", ""
	if res.Error != nil {
		code, rule = string(res.Error.Code), res.Error.Rule
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
	if o := r.broker.cfg.Observer; o != nil {
		o.ObserveRun(decision, code, time.Duration(res.DurationMS*float64(time.Millisecond)))
	}
	a := r.broker.cfg.Audit
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
		slog.String("rule", rule),
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
