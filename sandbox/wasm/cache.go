package wasm

import (
	"container/list"
	"context"
	"fmt"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/wasm/internal/prevalidate"
)

// cacheKey names one compilation: a module under one memory limit (wazero
// fixes the memory limit at compilation).
type cacheKey struct {
	sha   string
	pages uint32
}

// entry is one held module and its compilations.
type entry struct {
	sha      string
	module   []byte
	compiled map[uint32]*compiled
	elem     *list.Element
}

// compiled is a compiled module with the runs using it. Every field is
// guarded by Engine.mu.
type compiled struct {
	cm      wazero.CompiledModule
	rt      *rtime
	entry   string // exports: "_start" or "run"
	users   int
	evicted bool // no longer in the cache: closed when users reaches 0
}

// lease is a compiled module held by one run (or by Put, briefly).
type lease struct {
	entry *entry // nil when not cached
	sha   string
	c     *compiled
}

// compileCall is a compilation in progress.
type compileCall struct {
	done      chan struct{} // closed with Engine.mu held
	started   time.Time     // zero until a compilation slot is taken
	abandoned bool          // the run that started it gave up
	c         *compiled
	err       *sandbox.Error
}

// moduleCache is an LRU of held modules, bounded in count and bytes.
type moduleCache struct {
	max, maxBytes, bytes int
	lru                  *list.List // of *entry, most recent first
	bySHA                map[string]*entry
}

func newModuleCache(max, maxBytes int) *moduleCache {
	return &moduleCache{max: max, maxBytes: maxBytes, lru: list.New(), bySHA: map[string]*entry{}}
}

func (m *moduleCache) peek(sha string) *entry { return m.bySHA[sha] }

func (m *moduleCache) get(sha string) *entry {
	ent := m.bySHA[sha]
	if ent != nil {
		m.lru.MoveToFront(ent.elem)
	}
	return ent
}

// add keeps c as the compilation of module under pages and evicts the least
// recently used modules past the bounds. It reports false when c is not
// kept (caching is off, or another compilation got there first).
func (m *moduleCache) add(sha string, module []byte, pages uint32, c *compiled) bool {
	if m.max <= 0 || len(module) > m.maxBytes {
		return false
	}
	ent := m.get(sha)
	if ent == nil {
		ent = &entry{sha: sha, module: module, compiled: map[uint32]*compiled{}}
		ent.elem = m.lru.PushFront(ent)
		m.bySHA[sha] = ent
		m.bytes += len(module)
	}
	if ent.compiled[pages] != nil {
		return false
	}
	ent.compiled[pages] = c
	for m.lru.Len() > m.max || m.bytes > m.maxBytes {
		back := m.lru.Back().Value.(*entry)
		if back == ent {
			break
		}
		m.remove(back)
	}
	return true
}

func (m *moduleCache) remove(ent *entry) {
	m.lru.Remove(ent.elem)
	delete(m.bySHA, ent.sha)
	m.bytes -= len(ent.module)
	for _, c := range ent.compiled {
		c.evicted = true
		if c.users == 0 {
			closeCompiled(c)
		}
	}
}

func (m *moduleCache) clear() {
	for m.lru.Len() > 0 {
		m.remove(m.lru.Front().Value.(*entry))
	}
}

func closeCompiled(c *compiled) {
	_ = c.cm.Close(context.Background())
	if c.rt.temp {
		_ = c.rt.r.Close(context.Background())
	}
}

// acquire returns module compiled for limits, from the cache or compiled
// now (once, whatever the number of runs asking), checked by the
// pre-validator first. The caller must release the lease.
func (e *Engine) acquire(ctx context.Context, module []byte, limits sandbox.Limits) (*lease, *sandbox.Error) {
	limits = limits.Resolve()
	if len(module) == 0 {
		return nil, sandbox.Errorf(sandbox.EModuleInvalid, "Pass the module as module_base64 (or name a held module with module_sha256).", "no WebAssembly module was given")
	}
	if len(module) > limits.MaxModuleBytes {
		return nil, sandbox.Errorf(sandbox.EModuleLimit, "Make the module smaller: strip debug sections and unused code.",
			fmt.Sprintf("the module is %d bytes, over the limit of %d bytes", len(module), limits.MaxModuleBytes))
	}
	sha := Hash(module)
	pages := pagesFor(limits.MemoryBytes)
	key := cacheKey{sha, pages}
	var code []byte // module as compiled: checked and instrumented
	for {
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return nil, sandbox.Errorf(sandbox.EInternal, "", "the WebAssembly engine is closed")
		}
		if _, bad := e.refused[sha]; bad {
			e.mu.Unlock()
			return nil, errCompileTooLong(e.compileTimeout)
		}
		if ent := e.cache.get(sha); ent != nil {
			if c := ent.compiled[pages]; c != nil {
				c.users++
				e.mu.Unlock()
				return &lease{entry: ent, sha: sha, c: c}, nil
			}
		}
		if cc := e.compiling[key]; cc != nil {
			e.mu.Unlock()
			select {
			case <-cc.done:
				if cc.err != nil {
					return nil, cc.err
				}
				continue // now cached (or compile it ourselves if caching is off)
			case <-ctx.Done():
				return nil, ctxError(ctx, nil)
			}
		}
		if code == nil {
			e.mu.Unlock()
			var err *sandbox.Error
			if code, err = prevalidate.CheckAndInstrument(module, prevalidateLimits(limits), allowedImport); err != nil {
				return nil, err
			}
			continue
		}
		rt, err := e.runtimeFor(ctx, pages)
		if err != nil {
			e.mu.Unlock()
			return nil, sandbox.Errorf(sandbox.EInternal, "", "cannot start the WebAssembly runtime")
		}
		cc := &compileCall{done: make(chan struct{})}
		e.compiling[key] = cc
		e.mu.Unlock()
		go e.compile(cc, key, module, code, rt)
		return e.awaitCompile(ctx, cc, sha, module)
	}
}

// awaitCompile waits for the compilation started by this run, within the
// compilation budget and ctx.
func (e *Engine) awaitCompile(ctx context.Context, cc *compileCall, sha string, module []byte) (*lease, *sandbox.Error) {
	budget := time.NewTimer(e.compileTimeout)
	defer budget.Stop()
	for {
		var why *sandbox.Error
		select {
		case <-cc.done:
		case <-ctx.Done():
			why = ctxError(ctx, nil)
			if why.Code == sandbox.ETimeout {
				why = sandbox.Errorf(sandbox.EModuleLimit, "Make the module smaller or simpler, or raise timeout_ms.",
					"compilation did not finish within the run's time limit")
			}
		case <-budget.C:
			why = errCompileTooLong(e.compileTimeout)
		}
		e.mu.Lock()
		select {
		case <-cc.done:
			defer e.mu.Unlock()
			if cc.err != nil {
				return nil, cc.err
			}
			var ent *entry
			if !cc.c.evicted {
				ent = e.cache.peek(sha)
			}
			return &lease{entry: ent, sha: sha, c: cc.c}, nil
		default:
		}
		if why.Code == sandbox.EModuleLimit && !cc.started.IsZero() && time.Since(cc.started) < e.compileTimeout && ctx.Err() == nil {
			// The budget ran while waiting for a compilation slot: keep waiting.
			e.mu.Unlock()
			budget.Reset(e.compileTimeout - time.Since(cc.started))
			continue
		}
		cc.abandoned = true
		if !cc.started.IsZero() && time.Since(cc.started) >= e.compileTimeout {
			if len(e.refused) >= 1024 {
				clear(e.refused)
			}
			e.refused[sha] = struct{}{}
		}
		e.mu.Unlock()
		return nil, why
	}
}

// compile compiles module in rt, in its own goroutine: wazero's compilation
// cannot be interrupted, so a run that runs out of budget leaves it behind
// and the result is dropped (or kept, if the module was not refused).
func (e *Engine) compile(cc *compileCall, key cacheKey, module, code []byte, rt *rtime) {
	e.sem <- struct{}{}
	e.mu.Lock()
	cc.started = time.Now()
	e.mu.Unlock()
	cm, err := rt.r.CompileModule(context.Background(), code)
	<-e.sem
	var serr *sandbox.Error
	var start string
	if err != nil {
		serr = sandbox.Errorf(sandbox.EModuleInvalid, "Check the module with a WebAssembly validator (wasm-tools validate, wasm-validate).",
			"invalid module: "+firstLine(err.Error(), 300))
	} else {
		fns := cm.ExportedFunctions()
		switch {
		case fns["_start"] != nil:
			start = "_start"
		case fns["run"] != nil:
			start = "run"
		default:
			serr = sandbox.Errorf(sandbox.EModuleInvalid, "Export a \"_start\" function (a WASI command) or a \"run\" function.",
				"the module exports neither _start nor run")
		}
		if serr == nil && len(fns[start].ParamTypes()) != 0 {
			serr = sandbox.Errorf(sandbox.EModuleInvalid, "The entry point takes no parameters.",
				fmt.Sprintf("the module's %s function takes parameters", start))
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	defer close(cc.done)
	delete(e.compiling, key)
	if serr != nil {
		if cm != nil {
			_ = cm.Close(context.Background())
		}
		if rt.temp {
			_ = rt.r.Close(context.Background())
		}
		cc.err = serr
		return
	}
	c := &compiled{cm: cm, rt: rt, entry: start}
	if !cc.abandoned {
		c.users = 1
	}
	_, refused := e.refused[key.sha]
	if e.closed || refused || rt.temp || !e.cache.add(key.sha, module, key.pages, c) {
		c.evicted = true
		if c.users == 0 {
			closeCompiled(c)
		}
	}
	cc.c = c
}

// release ends a lease.
func (e *Engine) release(l *lease) {
	e.mu.Lock()
	defer e.mu.Unlock()
	l.c.users--
	if l.c.users == 0 && l.c.evicted {
		closeCompiled(l.c)
	}
}

func errCompileTooLong(d time.Duration) *sandbox.Error {
	return sandbox.Errorf(sandbox.EModuleLimit, "Make the module smaller or simpler: fewer and smaller functions.",
		fmt.Sprintf("compilation took too long (over %v); the module is refused", d))
}
