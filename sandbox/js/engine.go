package js

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/internal/lru"
)

// Config configures an Engine. The zero value is ready to use.
type Config struct {
	// ProgramCacheSize bounds the number of compiled programs kept, keyed by
	// the SHA-256 of their source, so that a program submitted again skips
	// parsing and compilation. If zero, 256 programs are kept; if negative,
	// nothing is cached.
	ProgramCacheSize int
}

// Engine runs JavaScript programs in fresh goja runtimes, in the calling
// process. It is safe for concurrent use; each Execute gets its own runtime.
type Engine struct {
	cache *lru.Cache[*compiled]
}

var _ sandbox.Executor = (*Engine)(nil)

// New returns an Engine configured by cfg.
func New(cfg Config) *Engine {
	size := cfg.ProgramCacheSize
	if size == 0 {
		size = 256
	}
	return &Engine{cache: lru.New[*compiled](size, nil)}
}

// Execute runs job to completion and reports its outcome. It returns when the
// program's promise settles, when it can no longer settle (E_UNSETTLED), or
// when ctx or job.Limits.Timeout ends the run; in every case the tool calls
// still in flight are cancelled and waited for before Execute returns.
func (e *Engine) Execute(ctx context.Context, job *sandbox.Job, host sandbox.Host) (out *sandbox.Outcome) {
	limits := job.Limits.Resolve()
	out = &sandbox.Outcome{}
	if lang := job.Program.Language; lang != "" && lang != sandbox.JavaScript {
		out.Err = sandbox.Errorf(sandbox.EInternal, "", fmt.Sprintf("the JavaScript engine cannot run %s programs", lang))
		return out
	}
	if err := checkSource(job.Program.Source, limits.MaxSourceBytes); err != nil {
		out.Err = err
		return out
	}
	var input json.RawMessage
	if len(job.Program.Input) > 0 {
		input = job.Program.Input
		if !json.Valid(input) {
			out.Err = sandbox.Errorf(sandbox.EResultInvalid, "Pass input as valid JSON.", "input is not valid JSON")
			return out
		}
	}
	c, serr := e.compile(job.Program.Source)
	if serr != nil {
		out.Err = serr
		return out
	}
	prg := c.prog

	ctx, cancel := sandbox.WithWallLimit(ctx, limits.Timeout)
	defer cancel()
	if job.SendPlan && c.planOK { // before any guest code runs (sandbox.PlanCall)
		if err := sandbox.SendPlan(ctx, host, c.plan); err != nil {
			out.Err = err
			return out
		}
	}
	r := newRun(ctx, job, limits, host)
	defer r.close()

	value, err := r.execute(prg, input)
	r.logMu.Lock()
	out.Logs, out.LogsTruncated, out.Partial = r.logs, r.logsTruncated, r.partial
	r.logMu.Unlock()
	if err != nil {
		out.Err = err
		return out
	}
	out.Value = value
	return out
}

// completion is a finished tool call on its way back to the guest goroutine.
type completion struct {
	id     int
	result json.RawMessage
	err    error
}

// pending is a started tool call awaiting its completion.
type pending struct {
	resolve, reject func(any) error
}

// run is the state of one Execute. All fields without a comment about
// locking belong to the guest goroutine (the one running Execute).
type run struct {
	ctx    context.Context
	job    *sandbox.Job
	limits sandbox.Limits
	host   sandbox.Host
	rt     *goja.Runtime

	// stopMu guards stopErr: the first reason to stop the run wins.
	stopMu  sync.Mutex
	stopErr *sandbox.Error
	// disarm stops the deadline watcher.
	disarm func() bool

	callCtx    context.Context
	callCancel context.CancelFunc
	calls      sync.WaitGroup
	done       chan completion
	finished   chan struct{}
	started    int
	inflight   int
	// async is host as an AsyncHost, if it is one; unflushed: calls were
	// started through it since its last Flush.
	async     sandbox.AsyncHost
	unflushed bool
	pend      []pending

	// toolErrors maps each ToolError the engine created to the host's error,
	// so that an uncaught one ends the run with that exact error.
	toolErrors map[*goja.Object]*sandbox.Error

	g globals
	// argsEnc converts tool arguments (reused across calls).
	argsEnc *encoder
	// parseStack is the JSON parser's scratch stack, reused across results.
	parseStack []int32
	// interned holds short strings from results (see stringValue).
	interned map[string]goja.Value
	// origStringify is goja's JSON.stringify (tests compare against it).
	origStringify goja.Callable

	// logMu guards the captured logs (console runs on the guest goroutine,
	// but Execute reads them after a possible stop from another goroutine).
	logMu         sync.Mutex
	logs          []string
	logBytes      int
	logsTruncated bool
	logDropped    int
	// partial is the last value stored with progress(value) (under logMu).
	partial json.RawMessage

	// sink and psink receive logs and partial results as they happen, when
	// the host wants them.
	sink  sandbox.LogSink
	psink sandbox.PartialSink
}

func newRun(ctx context.Context, job *sandbox.Job, limits sandbox.Limits, host sandbox.Host) *run {
	r := &run{
		ctx:      ctx,
		job:      job,
		limits:   limits,
		host:     host,
		done:     make(chan completion, 16),
		finished: make(chan struct{}),
	}
	r.callCtx, r.callCancel = context.WithCancel(ctx)
	r.sink, _ = host.(sandbox.LogSink)
	r.async, _ = host.(sandbox.AsyncHost)
	r.psink, _ = host.(sandbox.PartialSink)
	return r
}

// stop ends the run with err (the first reason wins) and interrupts the
// guest. It is safe to call from any goroutine.
func (r *run) stop(err *sandbox.Error) {
	r.stopMu.Lock()
	if r.stopErr == nil {
		r.stopErr = err
	}
	err = r.stopErr
	r.stopMu.Unlock()
	if r.rt != nil {
		r.rt.Interrupt(err)
	}
	r.callCancel()
}

func (r *run) stopped() *sandbox.Error {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	return r.stopErr
}

// ctxError maps the end of the run's context to E_TIMEOUT or E_CANCELLED.
func (r *run) ctxError() *sandbox.Error {
	if r.ctx.Err() == context.Canceled {
		return sandbox.Errorf(sandbox.ECancelled, "", "the run was cancelled")
	}
	return sandbox.Errorf(sandbox.ETimeout,
		"Make the program do less work (fewer loop iterations, fewer or smaller tool calls), or raise timeout_ms up to the server's maximum.",
		fmt.Sprintf("the run exceeded its time limit of %v", r.limits.Timeout))
}

// flush sends the calls started through an AsyncHost since the last flush.
func (r *run) flush() {
	if r.unflushed {
		r.unflushed = false
		r.async.Flush()
	}
}

// close cancels the tool calls still in flight and waits for their
// goroutines, then disarms the deadline watcher. The runtime is dropped
// after this; until then the interrupt stays armed.
func (r *run) close() {
	r.callCancel()
	close(r.finished)
	r.calls.Wait()
	if r.disarm != nil {
		r.disarm()
	}
}

// execute sets up the runtime, runs the program and its event loop, and
// converts the result.
func (r *run) execute(prg *goja.Program, input json.RawMessage) (json.RawMessage, *sandbox.Error) {
	defer r.flush() // calls started and never awaited still leave, as with a Host
	rt := goja.New()
	r.rt = rt
	rt.SetMaxCallStackSize(r.limits.MaxStackFrames)
	rt.SetParserOptions(parser.WithDisableSourceMaps)
	fixClock(rt, r.job)
	// Arm the interrupt before any JavaScript runs; it stays armed until
	// close, after the result is converted.
	r.disarm = context.AfterFunc(r.ctx, func() { r.stop(r.ctxError()) })

	if err := r.setup(input); err != nil {
		return nil, err
	}
	fnv, err := rt.RunProgram(prg)
	if err != nil {
		return nil, r.mapErr(err)
	}
	fn, ok := goja.AssertFunction(fnv)
	if !ok {
		return nil, sandbox.Errorf(sandbox.EInternal, "", "the program wrapper is not a function")
	}
	pv, err := fn(goja.Undefined())
	if err != nil {
		return nil, r.mapErr(err)
	}
	p, ok := pv.Export().(*goja.Promise)
	if !ok {
		return nil, sandbox.Errorf(sandbox.EInternal, "", "the program wrapper did not return a promise")
	}
	for {
		if err := r.stopped(); err != nil {
			return nil, err
		}
		switch p.State() {
		case goja.PromiseStateFulfilled:
			return r.result(p.Result())
		case goja.PromiseStateRejected:
			return nil, r.describeThrown(p.Result())
		}
		if r.inflight == 0 {
			return nil, sandbox.Errorf(sandbox.EUnsettled,
				"Await only promises that settle: every promise must resolve or reject, and tool calls are the only asynchronous operations.",
				"the program's promise can never settle: it awaits a promise that nothing will resolve")
		}
		r.flush() // the calls this turn started leave together
		select {
		case c := <-r.done:
			if err := r.settle(c); err != nil {
				return nil, err
			}
		case <-r.ctx.Done():
			r.stop(r.ctxError())
			return nil, r.stopped()
		}
	}
}

// settle resolves or rejects the promise of a finished call, and then every
// other call that has finished meanwhile, on the guest goroutine. Resolving
// runs the guest's reactions (goja drains its job queue on return).
func (r *run) settle(c completion) *sandbox.Error {
	for {
		r.inflight--
		p := r.pend[c.id]
		r.pend[c.id] = pending{}
		var err error
		if c.err != nil {
			err = p.reject(r.toolError(sandbox.AsError(c.err, sandbox.EToolFailed)))
		} else if v, berr := r.buildValue(c.result); berr != nil {
			err = p.reject(r.toolError(berr))
		} else {
			err = p.resolve(v)
		}
		if err != nil {
			return r.mapErr(err)
		}
		select {
		case c = <-r.done:
		default:
			return nil
		}
	}
}

// result converts the program's result to compact JSON.
func (r *run) result(v goja.Value) (json.RawMessage, *sandbox.Error) {
	enc := r.encoder(modeResult, r.job.ResultCap())
	b, err := enc.encode(v)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte("null")
	}
	return b, nil
}

// progressFunction is the progress(value) global: it stores the compact
// JSON of value, converted like the result and bounded by the result
// budget, as the run's partial result (the last one wins), and hands it to
// the host's PartialSink. A value that cannot be stored throws a ToolError
// (E_OUTPUT_LIMIT or E_RESULT_INVALID) and keeps the previous one.
func (r *run) progressFunction() *goja.Object {
	return r.native("progress", func(c goja.FunctionCall) goja.Value {
		enc := r.encoder(modeResult, r.limits.MaxResultBytes)
		b, err := enc.encode(c.Argument(0))
		if err != nil {
			e := *err
			if e.Code == sandbox.EOutputLimit {
				e.Message = fmt.Sprintf("progress(value): the value is over the %d-byte result budget", r.limits.MaxResultBytes)
				e.Hint = "Store a smaller summary of the work done so far (counts, ids, totals), not the raw data."
			} else {
				e.Message = sandbox.Cap("progress(value): "+e.Message, sandbox.MaxMessageBytes)
			}
			panic(r.toolError(&e))
		}
		if b == nil {
			b = []byte("null")
		}
		r.logMu.Lock()
		r.partial = b
		r.logMu.Unlock()
		if r.psink != nil {
			r.psink.Partial(b)
		}
		return goja.Undefined()
	})
}
