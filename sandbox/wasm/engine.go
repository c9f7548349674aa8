package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/wasm/internal/prevalidate"
)

// Config configures an Engine. The zero value is ready to use and is the
// safe choice for running in the calling process: the interpreter, a memory
// cache only.
type Config struct {
	// Compiler selects wazero's optimizing compiler (native code). If false,
	// wazero's interpreter runs the module. Compilation can be driven to
	// minutes and compiled code with no loops can stall the Go runtime (see
	// # Security), so set Compiler only where the process can be killed:
	// the worker processes of the process tier.
	Compiler bool
	// CacheSize bounds the number of modules kept compiled in memory, keyed
	// by the SHA-256 of their bytes (least recently used first out; at most
	// 256 MiB of module bytes are held whatever the count). If zero, 64
	// modules are kept; if negative, nothing is kept and every run
	// compiles.
	CacheSize int
	// CacheDir, if set, also keeps compiled code on disk in that directory
	// (wazero's compilation cache; used with Compiler only). New creates it
	// (mode 0700) if missing, and refuses a directory, or an entry in it,
	// that is a symlink, is not owned by this process's user, or is
	// writable by group or others. Cached files carry wazero's CRC-32
	// checksum against corruption; it is not a defence against a writer with
	// this user's rights. If empty, nothing is written to disk.
	CacheDir string
	// CompileTimeout bounds the compilation of one module; past it the run
	// fails with E_MODULE_LIMIT and the module is refused from then on. If
	// zero, 10 s.
	CompileTimeout time.Duration
	// NoInterrupt, with Compiler, leaves out of the compiled code the check
	// for the end of the run at every loop iteration: each is a call into
	// Go, which made loop-heavy guests up to 28x slower (the expense
	// program's Go guest 162 -> 48 ms, its C guest 43 -> 3.4 ms). A run
	// past its deadline, cancelled or over its log budget then ends at its
	// next host call (which unwinds the guest) and a guest that makes none
	// runs on: set it only where the process is killed at the run's
	// deadline and on cancellation, as the process tier's supervisor kills
	// its workers.
	NoInterrupt bool
}

// Engine runs WebAssembly programs with wazero, in the calling process. It
// is safe for concurrent use; each Execute instantiates the module afresh.
// Close releases it.
type Engine struct {
	compiler       bool
	noInterrupt    bool
	cacheSize      int
	compileTimeout time.Duration
	wcache         wazero.CompilationCache
	sem            chan struct{} // bounds concurrent compilations

	mu       sync.Mutex
	closed   bool
	runtimes map[uint32]*rtime
	cache    *moduleCache
	// compiling holds the compilations in progress, so that one module
	// submitted by many runs at once is compiled once.
	compiling map[cacheKey]*compileCall
	// refused remembers modules whose compilation ran out of time.
	refused map[string]struct{}
}

var _ sandbox.Executor = (*Engine)(nil)

// maxRuntimes bounds the wazero runtimes kept, one per distinct memory
// limit; a run with yet another limit gets a runtime of its own, closed
// after it.
const maxRuntimes = 8

// maxHeldBytes bounds the module bytes kept by the cache.
const maxHeldBytes = 256 << 20

// New returns an Engine configured by cfg. It fails only when CacheDir is
// set and cannot be used safely.
func New(cfg Config) (*Engine, error) {
	e := &Engine{
		compiler:       cfg.Compiler,
		noInterrupt:    cfg.Compiler && cfg.NoInterrupt,
		cacheSize:      cfg.CacheSize,
		compileTimeout: cfg.CompileTimeout,
		runtimes:       map[uint32]*rtime{},
		compiling:      map[cacheKey]*compileCall{},
		refused:        map[string]struct{}{},
		sem:            make(chan struct{}, max(1, runtime.GOMAXPROCS(0))),
	}
	if e.cacheSize == 0 {
		e.cacheSize = 64
	}
	if e.compileTimeout <= 0 {
		e.compileTimeout = 10 * time.Second
	}
	e.cache = newModuleCache(max(e.cacheSize, 0), maxHeldBytes)
	if cfg.CacheDir != "" && cfg.Compiler {
		dir, err := checkCacheDir(cfg.CacheDir)
		if err != nil {
			return nil, err
		}
		c, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			return nil, fmt.Errorf("wasm: compilation cache: %w", err)
		}
		e.wcache = c
	} else {
		e.wcache = wazero.NewCompilationCache()
	}
	return e, nil
}

// Close releases the compiled modules and runtimes. Runs in progress must
// have returned.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.cache.clear()
	rts := e.runtimes
	e.runtimes = nil
	e.mu.Unlock()
	for _, rt := range rts {
		_ = rt.r.Close(ctx)
	}
	return e.wcache.Close(ctx)
}

// Hash returns the hex SHA-256 of module: the key of the module cache and
// of run_code's module_sha256.
func Hash(module []byte) string {
	s := sha256.Sum256(module)
	return hex.EncodeToString(s[:])
}

// Put checks module against the default limits, compiles it and keeps it,
// so that a later run can name it by its hash (see Module). It returns the
// hash.
func (e *Engine) Put(ctx context.Context, module []byte) (string, *sandbox.Error) {
	l := sandbox.DefaultLimits()
	k, serr := e.acquire(ctx, module, l)
	if serr != nil {
		return "", serr
	}
	e.release(k)
	return k.sha, nil
}

// Has reports whether the engine holds the module with this hex SHA-256.
func (e *Engine) Has(sha string) bool {
	_, ok := e.Module(sha)
	return ok
}

// Module returns the bytes of the held module with this hex SHA-256. The
// caller must not modify them.
func (e *Engine) Module(sha string) ([]byte, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ent := e.cache.peek(sha); ent != nil {
		return ent.module, true
	}
	return nil, false
}

// Execute runs job to completion and reports its outcome. It returns when
// the entry point returns, traps or exits, or when ctx or
// job.Limits.Timeout ends the run; in every case the tool calls still in
// flight are cancelled and waited for before Execute returns.
func (e *Engine) Execute(ctx context.Context, job *sandbox.Job, host sandbox.Host) *sandbox.Outcome {
	limits := job.Limits.Resolve()
	out := &sandbox.Outcome{}
	if job.Program.Language != sandbox.WASM {
		out.Err = sandbox.Errorf(sandbox.EInternal, "", fmt.Sprintf("the WebAssembly engine cannot run %q programs", job.Program.Language))
		return out
	}
	input := json.RawMessage("null")
	if len(job.Program.Input) > 0 {
		input = job.Program.Input
		if !json.Valid(input) {
			out.Err = sandbox.Errorf(sandbox.EResultInvalid, "Pass input as valid JSON.", "input is not valid JSON")
			return out
		}
	}
	ctx, cancel := sandbox.WithWallLimit(ctx, limits.Timeout)
	defer cancel()
	h, serr := e.acquire(ctx, job.Program.Module, limits)
	if serr != nil {
		out.Err = serr
		return out
	}
	defer e.release(h)
	r := newRun(ctx, limits, host, input)
	r.unwind = e.noInterrupt
	r.resultCap = job.ResultCap()
	r.seed, r.clock = job.Seed, job.Clock
	r.execute(h)
	r.finish(out)
	return out
}

// Compile-time and run-time structure.

type rtime struct {
	r     wazero.Runtime
	pages uint32
	temp  bool // not kept in Engine.runtimes
}

// pagesFor converts a memory limit to wasm pages (wazero's maximum is
// 65,536; the engine keeps one below, so that a 4 GiB memory is refused).
func pagesFor(memoryBytes int64) uint32 {
	p := memoryBytes / 65536
	if p > 65535 {
		p = 65535
	}
	if p < 0 {
		p = 0
	}
	return uint32(p)
}

// runtimeFor returns the runtime for a memory limit, creating it if needed.
// Called with e.mu held.
func (e *Engine) runtimeFor(ctx context.Context, pages uint32) (*rtime, error) {
	if rt := e.runtimes[pages]; rt != nil {
		return rt, nil
	}
	var rc wazero.RuntimeConfig
	if e.compiler {
		rc = wazero.NewRuntimeConfigCompiler()
	} else {
		rc = wazero.NewRuntimeConfigInterpreter()
	}
	rc = rc.WithCoreFeatures(api.CoreFeaturesV2).
		WithMemoryLimitPages(pages).
		WithCloseOnContextDone(!e.noInterrupt).
		WithDebugInfoEnabled(false).
		WithCompilationCache(e.wcache)
	ctx = context.WithoutCancel(ctx)
	r := wazero.NewRuntimeWithConfig(ctx, rc)
	if err := instantiateHost(ctx, r); err != nil {
		_ = r.Close(ctx)
		return nil, err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r); err != nil {
		_ = r.Close(ctx)
		return nil, err
	}
	rt := &rtime{r: r, pages: pages}
	if len(e.runtimes) >= maxRuntimes {
		rt.temp = true
		return rt, nil
	}
	e.runtimes[pages] = rt
	return rt, nil
}

// prevalidateLimits are the structural limits for a run's limits.
func prevalidateLimits(l sandbox.Limits) prevalidate.Limits {
	p := prevalidate.Defaults()
	p.ModuleBytes = l.MaxModuleBytes
	p.MemoryPages = pagesFor(l.MemoryBytes)
	if p.MemoryPages == 0 {
		p.MemoryPages = 1 // prevalidate's zero means the default; pages 0 is refused by wazero
	}
	return p
}

// allowedImport admits the functions of the sandcall host module and any
// function of wasi_snapshot_preview1 (wazero refuses names it does not
// provide, at instantiation).
func allowedImport(i prevalidate.Import) bool {
	switch i.Module {
	case hostModule:
		_, ok := hostFuncs[i.Name]
		return ok
	case wasi_snapshot_preview1.ModuleName:
		return true
	}
	return false
}

var errClosed = errors.New("wasm: engine closed")
