package bindings

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

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
	// raise it. Zero fields take the defaults of DESIGN.md §6; Timeout is
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
}

// Runner runs programs for run_code and the CLI: it resolves limits, binds
// the tools the policy exposes to code, runs the program under a deadline
// with a per-run Host from the broker, and assembles the Result.
type Runner struct {
	broker *Broker
	exec   sandbox.Executor
	limits sandbox.Limits
	langs  []sandbox.Language
	tier   string
	mods   *ModuleStore
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
	return &Runner{broker: cfg.Broker, exec: cfg.Executor, limits: l, tier: cfg.Tier, mods: mods,
		langs: append([]sandbox.Language(nil), langs...)}, nil
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
	// Progress, if set, is called after each tool call completes, with the
	// counts so far. It is called from the goroutine that made the call and
	// must not block.
	Progress func(sandbox.CallStats)
	// Approver asks a person about calls whose policy rule requires an
	// approval. If nil, such calls are denied. Approvals wait within the
	// run's own time limit.
	Approver Approver
}

// Run runs one program and always returns a Result; a failed program is a
// Result with OK false and an Error, never a Go error.
func (r *Runner) Run(ctx context.Context, req RunRequest) *sandbox.Result {
	start := time.Now()
	id := newRunID()
	lim := r.requestLimits(req.Limits)
	h := &run{b: r.broker, id: id, principal: req.Principal, caller: tools.Code,
		limits: lim, start: start, progress: req.Progress,
		approver: req.Approver, tier: r.tier}
	h.init()
	if req.Principal.ID == "" {
		h.principal = LocalPrincipal
	}

	var out *sandbox.Outcome
	if err := r.resolveModule(&req); err != nil {
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
		names := make([]string, len(bound))
		for i, t := range bound {
			names[i] = t.Name
		}
		job := &sandbox.Job{RunID: id, Program: req.Program, Limits: lim, Tools: names}
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
		Error:      out.Err,
	}
	if res.Logs == nil {
		res.Logs = []string{}
	}
	if !res.OK || len(res.Result) == 0 {
		res.Result = json.RawMessage("null")
	}
	r.auditRun(res, h.principal)
	return res
}

// resolveModule keeps a submitted module by hash, or finds the one named by
// ModuleSHA256.
func (r *Runner) resolveModule(req *RunRequest) *sandbox.Error {
	if req.Program.Language != sandbox.WASM {
		return nil
	}
	if len(req.Program.Module) > 0 {
		sha := r.mods.Put(req.Program.Module)
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
	m, ok := r.mods.Get(req.ModuleSHA256)
	if !ok {
		return &sandbox.Error{Code: sandbox.EModuleInvalid, Message: "the server holds no module with that module_sha256",
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

func (r *Runner) auditRun(res *sandbox.Result, p Principal) {
	code := ""
	if res.Error != nil {
		code = string(res.Error.Code)
	}
	decision := "ok"
	if !res.OK {
		decision = "error"
	}
	if o := r.broker.obs; o != nil {
		o.ObserveRun(decision, code, time.Duration(res.DurationMS*float64(time.Millisecond)))
	}
	a := r.broker.audit
	if !a.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	a.LogAttrs(context.Background(), slog.LevelInfo, "run",
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
		slog.Int("result_bytes", len(res.Result)),
	)
}

func newRunID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "run_" + hex.EncodeToString(b[:])
}
