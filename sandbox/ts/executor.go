package ts

import (
	"context"
	"crypto/sha256"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/internal/lru"
)

// Config configures an Executor.
type Config struct {
	// JS runs the transpiled JavaScript. Required: if nil, every run fails
	// with E_INTERNAL.
	JS sandbox.Executor
	// CacheBytes bounds the cache of transpiled programs, keyed by the
	// SHA-256 of their source. If zero, 16 MiB; if negative, nothing is
	// cached (a worker process runs one job).
	CacheBytes int
	// MaxTranspiles bounds the transpiles running at once, those abandoned
	// at their run's deadline included: esbuild cannot be interrupted, and a
	// hostile program near the source limit keeps a core busy for minutes.
	// A run that finds every slot taken waits for one until its deadline,
	// then ends with E_BUSY. If zero, half the CPUs (at least one).
	MaxTranspiles int
}

// Executor runs TypeScript Jobs: it transpiles the program and hands the
// JavaScript to Config.JS, then maps error positions in the outcome back to
// the TypeScript source. Jobs in any other language go to Config.JS as they
// are. It is safe for concurrent use.
type Executor struct {
	js    sandbox.Executor
	cache *lru.Cache[*Output]
	slots chan struct{} // one token per running transpile
}

var _ sandbox.Executor = (*Executor)(nil)

// New returns an Executor for cfg.
func New(cfg Config) *Executor {
	size := cfg.CacheBytes
	if size == 0 {
		size = 16 << 20
	}
	n := cfg.MaxTranspiles
	if n <= 0 {
		n = max(1, runtime.GOMAXPROCS(0)/2)
	}
	return &Executor{js: cfg.JS, cache: lru.New(size, (*Output).size), slots: make(chan struct{}, n)}
}

// Execute implements sandbox.Executor.
func (e *Executor) Execute(ctx context.Context, job *sandbox.Job, host sandbox.Host) *sandbox.Outcome {
	if e.js == nil {
		return &sandbox.Outcome{Err: sandbox.Errorf(sandbox.EInternal, "", "no JavaScript executor is configured for TypeScript")}
	}
	if job.Program.Language != sandbox.TypeScript {
		return e.js.Execute(ctx, job, host)
	}
	src := job.Program.Source
	if max := job.Limits.MaxSourceBytes; max > 0 && len(src) > max {
		return &sandbox.Outcome{Err: sandbox.Errorf(sandbox.ESourceLimit,
			"Shorten the program: move data into input or fetch it with tools.",
			fmt.Sprintf("the program is %d bytes, over the limit of %d bytes", len(src), max))}
	}
	start := time.Now()
	out, serr := e.transpile(ctx, src, job.Limits.Timeout)
	if serr != nil {
		return &sandbox.Outcome{Err: serr}
	}
	j := *job
	j.Program.Language = sandbox.JavaScript
	j.Program.Source = out.JS
	if job.SendPlan {
		// The plan with the TypeScript's lines, here where the program is
		// transpiled (the worker, in the process tier); not again by the
		// JavaScript engine.
		if pl, ok := out.plan(src); ok {
			if err := sandbox.SendPlan(ctx, host, pl); err != nil {
				return &sandbox.Outcome{Err: err}
			}
		}
		j.SendPlan = false
	}
	// The limit applied to the TypeScript; the JavaScript is that program.
	j.Limits.MaxSourceBytes = max(j.Limits.MaxSourceBytes, len(out.JS))
	if j.Limits.Timeout > 0 {
		// Transpiling took part of the run's wall time.
		j.Limits.Timeout = max(j.Limits.Timeout-time.Since(start), time.Millisecond)
	}
	o := e.js.Execute(ctx, &j, host)
	if o != nil && o.Err != nil {
		o.Err = remap(o.Err, out, src)
	}
	return o
}

// transpile returns the transpiled program, from the cache if it holds it,
// within timeout (if positive) and ctx. Only successes are cached.
func (e *Executor) transpile(ctx context.Context, src string, timeout time.Duration) (*Output, *sandbox.Error) {
	key := sha256.Sum256([]byte(src))
	if o, ok := e.cache.Get(key); ok {
		return o, nil
	}
	type result struct {
		o   *Output
		err *sandbox.Error
	}
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case e.slots <- struct{}{}:
	case <-expired:
		return nil, sandbox.Errorf(sandbox.EBusy,
			"Retry later, or submit the program as JavaScript: earlier TypeScript programs that ran out of time are still being transpiled.",
			"every TypeScript transpiler slot stayed busy until the run's time limit")
	case <-ctx.Done():
		if ctx.Err() == context.Canceled {
			return nil, sandbox.Errorf(sandbox.ECancelled, "", "the run was cancelled")
		}
		return nil, sandbox.Errorf(sandbox.ETimeout, "", "the run's deadline passed while waiting to transpile the TypeScript program")
	}
	done := make(chan result, 1)
	go func() {
		defer func() { <-e.slots }()
		o, err := Transpile(src)
		done <- result{o, err}
	}()
	// esbuild cannot be interrupted: past the deadline its goroutine is
	// left to finish on its own (see the package doc).
	select {
	case r := <-done:
		if r.err == nil {
			e.cache.Put(key, r.o)
		}
		return r.o, r.err
	case <-expired:
		return nil, sandbox.Errorf(sandbox.ETimeout,
			"Simplify the program's expressions and types (long chains of '<' comparisons and nested "+
				"conditional arrow functions make the TypeScript parser backtrack), or submit JavaScript.",
			fmt.Sprintf("transpiling the TypeScript program exceeded the run's time limit of %v", timeout))
	case <-ctx.Done():
		if ctx.Err() == context.Canceled {
			return nil, sandbox.Errorf(sandbox.ECancelled, "", "the run was cancelled")
		}
		return nil, sandbox.Errorf(sandbox.ETimeout, "", "the run's deadline passed while transpiling the TypeScript program")
	}
}

// The positions the JavaScript engine writes in its messages: a syntax
// error starts "line L:C: ", an uncaught error ends " (line L:C)", a
// nesting error starts "line L: ".
var (
	syntaxPos  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+):(\d+): `) })
	thrownPos  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\(line (\d+):(\d+)\)$`) })
	nestingPos = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): `) })
)

// remap rewrites the JavaScript positions in err's message as positions in
// the TypeScript source src. err itself is not modified.
func remap(err *sandbox.Error, out *Output, src string) *sandbox.Error {
	msg := err.Message
	pos := func(m []int, colIdx bool) (int, int, bool) {
		line, _ := strconv.Atoi(msg[m[2]:m[3]])
		col := 1
		if colIdx {
			col, _ = strconv.Atoi(msg[m[4]:m[5]])
		}
		l, c := out.Pos(src, line, col)
		return l, c, l > 0
	}
	switch err.Code {
	case sandbox.ESyntax:
		if m := syntaxPos().FindStringSubmatchIndex(msg); m != nil {
			if l, c, ok := pos(m, true); ok {
				msg = fmt.Sprintf("line %d, column %d: %s", l, c, msg[m[1]:])
			}
		}
	case sandbox.ESourceLimit:
		if m := nestingPos().FindStringSubmatchIndex(msg); m != nil {
			if l, _, ok := pos(m, false); ok {
				msg = fmt.Sprintf("line %d: %s", l, msg[m[1]:])
			}
		}
	default:
		if m := thrownPos().FindStringSubmatchIndex(msg); m != nil {
			if l, c, ok := pos(m, true); ok {
				msg = fmt.Sprintf("%s(line %d:%d)", msg[:m[0]], l, c)
			}
		}
	}
	if msg == err.Message {
		return err
	}
	e := *err
	e.Message = sandbox.Cap(msg, sandbox.MaxMessageBytes)
	return &e
}
