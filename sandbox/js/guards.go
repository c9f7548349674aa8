package js

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/jsonscan"
)

// wrapMethod replaces o[name] (a built-in method) by a native wrapper that
// receives the original.
func (r *run) wrapMethod(o *goja.Object, name string, wrap func(orig goja.Callable, c goja.FunctionCall) goja.Value) {
	orig, ok := goja.AssertFunction(o.Get(name))
	if !ok {
		return
	}
	fn := r.native(name, func(c goja.FunctionCall) goja.Value { return wrap(orig, c) })
	_ = o.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

func (r *run) wrapSymbolMethod(o *goja.Object, sym *goja.Symbol, wrap func(orig goja.Callable, c goja.FunctionCall) goja.Value) {
	orig, ok := goja.AssertFunction(o.GetSymbol(sym))
	if !ok {
		return
	}
	fn := r.native("["+sym.String()+"]", func(c goja.FunctionCall) goja.Value { return wrap(orig, c) })
	_ = o.DefineDataPropertySymbol(sym, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// native returns a native function named name (goja would otherwise name
// it after the Go function, which the guest must not see).
func (r *run) native(name string, fn func(goja.FunctionCall) goja.Value) *goja.Object {
	o := r.rt.ToValue(fn).(*goja.Object)
	_ = o.DefineDataProperty("name", r.rt.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return o
}

// callOrig calls a wrapped built-in and rethrows what it throws.
func callOrig(orig goja.Callable, c goja.FunctionCall) goja.Value {
	v, err := orig(c.This, c.Arguments...)
	if err != nil {
		panic(err)
	}
	return v
}

func (r *run) builtin(path ...string) *goja.Object {
	o := r.rt.GlobalObject()
	for _, p := range path {
		next, ok := o.Get(p).(*goja.Object)
		if !ok {
			return nil
		}
		o = next
	}
	return o
}

func (r *run) throwRange(msg string) {
	ctor, _ := goja.AssertConstructor(r.g.rangeError)
	o, err := ctor(nil, r.rt.ToValue(msg))
	if err != nil {
		panic(err)
	}
	panic(o)
}

// guardJSON bounds JSON.stringify and JSON.parse. JSON.stringify of plain
// data is done by the engine's own converter (faster than goja's, and with
// a depth bound); values that need guest code (toJSON, accessors, proxies,
// replacers) go to goja's implementation after a static depth check. goja's
// own cycle check is quadratic in depth, and its recursion is native, so an
// interrupt would not stop a deep static structure.
func (r *run) guardJSON() {
	j := r.builtin("JSON")
	if j == nil {
		return
	}
	maxBytes := int(min(r.limits.MemoryBytes/2, 1<<30))
	r.origStringify, _ = goja.AssertFunction(j.Get("stringify"))
	r.wrapMethod(j, "stringify", func(orig goja.Callable, c goja.FunctionCall) goja.Value {
		v, replacer, space := c.Argument(0), c.Argument(1), c.Argument(2)
		if goja.IsUndefined(replacer) || goja.IsNull(replacer) {
			if gap, ok := gapOf(space); ok {
				e := r.encoder(modeStringify, maxBytes)
				e.gap = gap
				wrote, err := e.value(v)
				if err == nil {
					if !wrote {
						return goja.Undefined()
					}
					return r.rt.ToValue(string(e.buf))
				}
				switch err.kind {
				case errDepth:
					r.throwRange(fmt.Sprintf("JSON.stringify: the value nests deeper than %d levels", maxStringifyDepth))
				case errCycle:
					panic(r.rt.NewTypeError("Converting circular structure to JSON"))
				case errBigInt:
					panic(r.rt.NewTypeError("Do not know how to serialize a BigInt"))
				case errSize:
					r.stop(memoryError("JSON.stringify would build a string over the memory limit"))
					return goja.Undefined()
				}
			}
		}
		if r.tooDeep(v, maxStringifyDepth) {
			r.throwRange(fmt.Sprintf("JSON.stringify: the value nests deeper than %d levels", maxStringifyDepth))
		}
		return callOrig(orig, c)
	})
	r.wrapMethod(j, "parse", func(orig goja.Callable, c goja.FunctionCall) goja.Value {
		text := c.Argument(0)
		s, ok := text.(goja.String)
		if !ok {
			s, _ = text.ToString().(goja.String)
		}
		if s != nil && jsonscan.Depth(s.String()) > maxStringifyDepth {
			ctor, _ := goja.AssertConstructor(r.g.syntaxError)
			o, err := ctor(nil, r.rt.ToValue(fmt.Sprintf("JSON.parse: the text nests deeper than %d levels", maxStringifyDepth)))
			if err != nil {
				panic(err)
			}
			panic(o)
		}
		args := append([]goja.Value{r.rt.ToValue(s)}, c.Arguments[min(1, len(c.Arguments)):]...)
		v, err := orig(c.This, args...)
		if err != nil {
			panic(err)
		}
		return v
	})
}

// gapOf computes JSON.stringify's indentation for a primitive space
// argument; ok is false for objects (whose conversion runs guest code).
func gapOf(space goja.Value) (string, bool) {
	switch {
	case space == nil || goja.IsUndefined(space) || goja.IsNull(space):
		return "", true
	case goja.IsNumber(space):
		n := space.ToFloat()
		if n >= 1 {
			return strings.Repeat(" ", int(min(n, 10))), true
		}
		return "", true
	}
	switch x := space.(type) {
	case *goja.Object:
		return "", false
	case goja.String:
		if x.Length() > 10 {
			x = x.Substring(0, 10)
		}
		return x.String(), true
	}
	return "", true
}

// tooDeep reports whether the statically reachable part of v (own
// enumerable data properties of ordinary objects) nests deeper than max. It
// runs no guest code and visits at most a million values.
func (r *run) tooDeep(v goja.Value, max int) bool {
	budget := 1 << 20
	var onPath []*goja.Object
	var walk func(v goja.Value, depth int) bool
	walk = func(v goja.Value, depth int) bool {
		o, ok := v.(*goja.Object)
		if !ok || budget <= 0 {
			return false
		}
		budget--
		if depth > max {
			return true
		}
		if o.ExportType() == proxyType {
			return false
		}
		for _, p := range onPath {
			if p == o {
				return false
			}
		}
		onPath = append(onPath, o)
		defer func() { onPath = onPath[:len(onPath)-1] }()
		for _, k := range o.Keys() {
			if budget <= 0 {
				return false
			}
			child, kind := r.ownData(o, r.rt.ToValue(k))
			if kind == propData && walk(child, depth+1) {
				return true
			}
		}
		return false
	}
	return walk(v, 0)
}

// guardRegexp stops a run whose single regular expression operation ran
// for the match timeout: goja's backtracking engine gives up silently (as
// "no match") when a match times out, and an interrupt cannot stop it.
func (r *run) guardRegexp() {
	proto := r.builtin("RegExp", "prototype")
	if proto == nil {
		return
	}
	timed := func(orig goja.Callable, c goja.FunctionCall) goja.Value {
		t0 := time.Now()
		v, err := orig(c.This, c.Arguments...)
		if time.Since(t0) >= regexpMatchTimeout {
			r.stop(sandbox.Errorf(sandbox.ETimeout,
				"Simplify the regular expression: avoid nested quantifiers such as (a+)+ that backtrack exponentially.",
				fmt.Sprintf("a regular expression ran for over %v", regexpMatchTimeout)))
			return goja.Undefined()
		}
		if err != nil {
			panic(err)
		}
		return v
	}
	for _, name := range []string{"exec", "test"} {
		r.wrapMethod(proto, name, timed)
	}
	for _, sym := range []*goja.Symbol{goja.SymMatch, goja.SymMatchAll, goja.SymReplace, goja.SymSearch, goja.SymSplit} {
		r.wrapSymbolMethod(proto, sym, timed)
	}
}

func memoryError(what string) *sandbox.Error {
	return sandbox.Errorf(sandbox.EMemory,
		"Build smaller values: the run's memory is limited.",
		what)
}

// guardMemory refuses the well-known single-call allocators when their
// result would exceed the memory limit. It is defence in depth only: goja
// cannot bound memory, and the process tier is the boundary.
func (r *run) guardMemory() {
	limit := float64(r.limits.MemoryBytes)
	over := func(bytes float64, what string) bool {
		if bytes > limit {
			r.stop(memoryError(fmt.Sprintf("%s would allocate about %.0f MiB, over the %d MiB memory limit",
				what, bytes/(1<<20), r.limits.MemoryBytes>>20)))
			return true
		}
		return false
	}
	num := func(v goja.Value) float64 {
		if goja.IsNumber(v) {
			return v.ToFloat()
		}
		return 0
	}
	strLen := func(v goja.Value) float64 {
		if s, ok := v.(goja.String); ok {
			return float64(s.Length())
		}
		return 0
	}
	// arrayLen reads the length of a real array (a data property) or of
	// an ordinary array-like object whose length is a data property.
	arrayLen := func(v goja.Value) float64 {
		o, ok := v.(*goja.Object)
		if !ok || o.ExportType() == proxyType {
			return 0
		}
		l, kind := r.ownData(o, r.rt.ToValue("length"))
		if kind != propData {
			return 0
		}
		return num(l)
	}
	if sp := r.builtin("String", "prototype"); sp != nil {
		r.wrapMethod(sp, "repeat", func(orig goja.Callable, c goja.FunctionCall) goja.Value {
			n := num(c.Argument(0))
			if over(2*strLen(c.This)*n, "String.prototype.repeat") {
				return goja.Undefined()
			}
			// goja appends one copy at a time, natively (no interrupt);
			// Go's strings.Repeat doubles. Same result for ASCII strings.
			if s, ok := c.This.(goja.String); ok && n >= 1024 && n == math.Trunc(n) {
				if gs := s.String(); isASCII(gs) {
					return r.rt.ToValue(strings.Repeat(gs, int(n)))
				}
			}
			return callOrig(orig, c)
		})
		for _, name := range []string{"padStart", "padEnd"} {
			name := name
			r.wrapMethod(sp, name, func(orig goja.Callable, c goja.FunctionCall) goja.Value {
				if over(2*num(c.Argument(0)), "String.prototype."+name) {
					return goja.Undefined()
				}
				return callOrig(orig, c)
			})
		}
		r.wrapMethod(sp, "split", func(orig goja.Callable, c goja.FunctionCall) goja.Value {
			if sep, ok := c.Argument(0).(goja.String); ok && sep.Length() == 0 {
				if over(32*strLen(c.This), "String.prototype.split") {
					return goja.Undefined()
				}
			}
			return callOrig(orig, c)
		})
	}
	if ap := r.builtin("Array", "prototype"); ap != nil {
		r.wrapMethod(ap, "fill", func(orig goja.Callable, c goja.FunctionCall) goja.Value {
			if over(16*arrayLen(c.This), "Array.prototype.fill") {
				return goja.Undefined()
			}
			return callOrig(orig, c)
		})
		r.wrapMethod(ap, "join", func(orig goja.Callable, c goja.FunctionCall) goja.Value {
			sep := 1.0
			if s, ok := c.Argument(0).(goja.String); ok {
				sep = float64(s.Length())
			}
			if over(2*sep*arrayLen(c.This), "Array.prototype.join") {
				return goja.Undefined()
			}
			return callOrig(orig, c)
		})
	}
	if a := r.builtin("Array"); a != nil {
		r.wrapMethod(a, "from", func(orig goja.Callable, c goja.FunctionCall) goja.Value {
			if over(16*arrayLen(c.Argument(0)), "Array.from") {
				return goja.Undefined()
			}
			return callOrig(orig, c)
		})
	}
	const maxApplyArgs = 1 << 20
	applyGuard := func(args goja.Value) {
		if arrayLen(args) > maxApplyArgs {
			r.throwRange(fmt.Sprintf("too many arguments (over %d)", maxApplyArgs))
		}
	}
	if fp := r.g.functionProto; fp != nil {
		r.wrapMethod(fp, "apply", func(orig goja.Callable, c goja.FunctionCall) goja.Value {
			applyGuard(c.Argument(1))
			return callOrig(orig, c)
		})
	}
	if rf := r.builtin("Reflect"); rf != nil {
		r.wrapMethod(rf, "apply", func(orig goja.Callable, c goja.FunctionCall) goja.Value {
			applyGuard(c.Argument(2))
			return callOrig(orig, c)
		})
		r.wrapMethod(rf, "construct", func(orig goja.Callable, c goja.FunctionCall) goja.Value {
			applyGuard(c.Argument(1))
			return callOrig(orig, c)
		})
	}
	// Buffers and typed arrays allocate their whole length at once.
	for _, k := range []struct {
		name string
		size float64
	}{
		{"ArrayBuffer", 1}, {"Uint8Array", 1}, {"Uint8ClampedArray", 1}, {"Int8Array", 1},
		{"Uint16Array", 2}, {"Int16Array", 2}, {"Uint32Array", 4}, {"Int32Array", 4},
		{"Float32Array", 4}, {"Float64Array", 8}, {"BigInt64Array", 8}, {"BigUint64Array", 8},
	} {
		target := r.builtin(k.name)
		if target == nil {
			continue
		}
		construct, ok := goja.AssertConstructor(target)
		if !ok {
			continue
		}
		name, size := k.name, k.size
		proxy := r.rt.NewProxy(target, &goja.ProxyTrapConfig{
			Construct: func(target *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
				if len(args) > 0 {
					if over(size*num(args[0]), "new "+name) {
						return r.rt.NewObject()
					}
				}
				o, err := construct(newTarget, args...)
				if err != nil {
					panic(err)
				}
				return o
			},
		})
		pv := r.rt.ToValue(proxy)
		_ = r.rt.GlobalObject().DefineDataProperty(name, pv, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		if proto, ok := target.Get("prototype").(*goja.Object); ok {
			_ = proto.DefineDataProperty("constructor", pv, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		}
	}
}
