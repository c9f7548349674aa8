package js

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js/prelude"
)

// regexpMatchTimeout bounds one backtracking regular expression match (goja
// runs those on regexp2, which an interrupt cannot stop). A timed-out match
// silently fails in goja, so the engine also times every RegExp method and
// stops a run whose single regexp operation reached this bound (E_TIMEOUT).
const regexpMatchTimeout = time.Second

func init() {
	// regexp2 copies this into every Regexp it compiles. goja is its only
	// user in sandcall, and goja is imported only by this package.
	regexp2.DefaultMatchTimeout = regexpMatchTimeout
}

// Programs compiled once, on first use (a server of the process tier never
// runs one), and run in every runtime (a *goja.Program is immutable and
// shareable).
var (
	preludeProgram = sync.OnceValue(func() *goja.Program { return goja.MustCompile("prelude.js", prelude.JS, true) })
	hardenProgram  = sync.OnceValue(func() *goja.Program { return goja.MustCompile("harden.js", hardenJS, true) })
)

// hardenJS removes every way to compile code at run time and returns the
// built-ins the engine needs, captured before any guest code runs. Its
// completion value is a function of the native thrower that replaces the
// constructors of the function kinds.
const hardenJS = `(function (thrower) {
  'use strict';
  const kinds = [
    Function.prototype,
    Object.getPrototypeOf(async function () {}),
    Object.getPrototypeOf(function* () {}),
  ];
  for (const p of kinds) {
    Object.defineProperty(p, 'constructor', { value: thrower, writable: false, enumerable: false, configurable: false });
  }
  delete globalThis.eval;
  delete globalThis.Function;
  delete globalThis.GoError;
  return [Object.getOwnPropertyDescriptor, Error.prototype, Date.prototype, Date.prototype.toJSON, Date.prototype.toISOString,
    RangeError, SyntaxError, kinds[0]];
})`

// globals are the built-ins captured before the guest runs.
type globals struct {
	gopd       goja.Callable // Object.getOwnPropertyDescriptor
	errorProto *goja.Object
	dateProto  *goja.Object
	dateToJSON goja.Value
	dateToISO  goja.Callable
	toolError  *goja.Object // the ToolError constructor
	toolProto  *goja.Object // ToolError.prototype
	trueV      goja.Value
	falseV     goja.Value
	// The prototypes lazy wrappers start with (recorded at the first one).
	lazyObjProto, lazyArrProto *goja.Object
	rangeError                 goja.Value
	syntaxError                goja.Value
	functionProto              *goja.Object
}

var (
	proxyType = reflect.TypeOf(goja.Proxy{})
	int64Type = reflect.TypeOf(int64(0))
	boolType  = reflect.TypeOf(true)
	timeType  = reflect.TypeOf(time.Time{})
	arrayType = reflect.TypeOf([]any(nil))
	funcType  = reflect.TypeOf(func(goja.FunctionCall) goja.Value { return nil })
)

// setup hardens the fresh runtime and binds the guest API.
func (r *run) setup(input json.RawMessage) *sandbox.Error {
	rt := r.rt
	g := &r.g
	g.trueV = rt.ToValue(true)
	g.falseV = rt.ToValue(false)

	hv, err := rt.RunProgram(hardenProgram())
	if err != nil {
		return r.mapErr(err)
	}
	harden, _ := goja.AssertFunction(hv)
	thrower := r.native("Function", func(goja.FunctionCall) goja.Value {
		panic(rt.NewTypeError("code generation is disabled: the Function constructor is not available"))
	})
	cv, err := harden(goja.Undefined(), thrower)
	if err != nil {
		return r.mapErr(err)
	}
	captured := cv.(*goja.Object)
	g.gopd, _ = goja.AssertFunction(captured.Get("0"))
	g.errorProto = captured.Get("1").(*goja.Object)
	g.dateProto = captured.Get("2").(*goja.Object)
	g.dateToJSON = captured.Get("3")
	g.dateToISO, _ = goja.AssertFunction(captured.Get("4"))
	g.rangeError = captured.Get("5")
	g.syntaxError = captured.Get("6")
	g.functionProto = captured.Get("7").(*goja.Object)

	tv, err := rt.RunProgram(preludeProgram())
	if err != nil {
		return r.mapErr(err)
	}
	g.toolError = tv.(*goja.Object)
	g.toolProto = g.toolError.Get("prototype").(*goja.Object)

	global := rt.GlobalObject()
	define := func(o *goja.Object, name string, v any) {
		_ = o.DefineDataProperty(name, rt.ToValue(v), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	define(global, "ToolError", g.toolError)
	define(global, "tools", r.toolsObject())
	define(global, "console", r.consoleObject())
	define(global, "progress", r.progressFunction())
	define(global, "state", r.stateObject()) // state.go
	inputV := goja.Null()
	if len(input) > 0 {
		v, berr := r.buildValue(input)
		if berr != nil {
			return sandbox.Errorf(sandbox.EResultInvalid, "Pass input as valid JSON.", "input: "+berr.Message)
		}
		inputV = v
	}
	define(global, "input", inputV)
	// A program that is a tool (tools/programs) reads its arguments as
	// args: the same value.
	define(global, "args", inputV)

	r.guardJSON()
	r.guardRegexp()
	r.guardMemory()
	return nil
}

// toolsObject builds the tools global: one function per bound name, plus
// tools.call(name, args), tools.$search and tools.$describe. It is a
// dynamic object (toolsObject below): reading any other name gives a
// function whose call goes to the host like tools.call(name, args), so a
// misspelt, unknown, removed or denied tool rejects with the broker's
// ToolError (E_TOOL_UNKNOWN with the closest names, E_TOOL_DENIED with the
// rule) rather than a TypeError; `'name' in tools` is true only for bound
// tools.
func (r *run) toolsObject() *goja.Object {
	o := &toolsObject{r: r, bound: make(map[string]*goja.Object, len(r.job.Tools)), special: r.discoveryFuncs()}
	for _, name := range r.job.Tools {
		if name == "call" || o.bound[name] != nil {
			continue
		}
		name := name
		o.bound[name] = r.native(name, func(c goja.FunctionCall) goja.Value {
			return r.callWithOptions(name, c.Argument(0), c.Argument(1))
		})
		o.keys = append(o.keys, name)
	}
	o.special["call"] = r.native("call", func(c goja.FunctionCall) goja.Value {
		nv := c.Argument(0)
		if !goja.IsString(nv) {
			return r.rejected(sandbox.Errorf(sandbox.EToolUnknown,
				"Pass the tool name as a string: tools.call(\"name\", args).", "tools.call: the tool name must be a string"))
		}
		return r.callByName(nv.String(), c.Argument(1), c.Argument(2))
	})
	o.special[sandbox.ReadHandle] = r.readHandleFunc()
	return r.rt.NewDynamicObject(o)
}

// callByName calls a tool named by the guest (tools.call, or a name not
// bound).
func (r *run) callByName(name string, args, opts goja.Value) goja.Value {
	if len(name) > 256 {
		return r.rejected(sandbox.Errorf(sandbox.EToolUnknown, "Use search_tools to find the tool's name.", "tools.call: the tool name is too long"))
	}
	return r.callWithOptions(name, args, opts)
}

// toolsObject is the handler of the tools global. Its members are read-only.
type toolsObject struct {
	r       *run
	bound   map[string]*goja.Object // bound tools
	keys    []string                // bound names, in order
	special map[string]*goja.Object // call, $search, $describe (not enumerated)
}

// notTools are names a reader of tools may mean as an object's own
// machinery, not as a tool: Object.prototype's members, and the hooks of
// await, JSON and conversions. Reading them falls through to the prototype.
var notTools = map[string]bool{
	"constructor": true, "toString": true, "toLocaleString": true, "valueOf": true, "hasOwnProperty": true,
	"isPrototypeOf": true, "propertyIsEnumerable": true, "__proto__": true, "__defineGetter__": true,
	"__defineSetter__": true, "__lookupGetter__": true, "__lookupSetter__": true, "then": true, "toJSON": true,
	"inspect": true, "length": true, "prototype": true,
}

func (o *toolsObject) Get(key string) goja.Value {
	if fn := o.bound[key]; fn != nil {
		return fn
	}
	if fn := o.special[key]; fn != nil {
		return fn
	}
	if key == "" || key[0] == '$' || notTools[key] {
		return nil // "$" starts no tool name: only $search and $describe
	}
	r := o.r
	return r.native(key, func(c goja.FunctionCall) goja.Value { return r.callByName(key, c.Argument(0), c.Argument(1)) })
}

func (o *toolsObject) Set(string, goja.Value) bool { return false }

func (o *toolsObject) Has(key string) bool { return o.bound[key] != nil || o.special[key] != nil }

func (o *toolsObject) Delete(key string) bool { return !o.Has(key) }

func (o *toolsObject) Keys() []string { return o.keys }

// callTool starts one tool call and returns its promise. The arguments are
// converted here, on the guest goroutine, by the bounded converter; the call
// itself runs in its own goroutine and its completion comes back through
// r.done.
func (r *run) callTool(name string, args goja.Value) goja.Value {
	if r.started >= r.limits.MaxCalls {
		return r.rejected(&sandbox.Error{
			Code:    sandbox.EToolCallLimit,
			Message: fmt.Sprintf("the run reached its limit of %d tool calls", r.limits.MaxCalls),
			Hint:    "Make fewer calls: batch work, or use tools that return more per call.",
			Tool:    name,
		})
	}
	if goja.IsUndefined(args) {
		args = nil
	}
	var argsJSON []byte
	if args == nil {
		argsJSON = []byte("{}")
	} else {
		// One encoder serves every call of the run (encoding runs no guest
		// code, so it is never re-entered); the bytes are copied out.
		enc := r.argsEnc
		if enc == nil {
			enc = r.encoder(modeArgs, maxArgsBytes)
			r.argsEnc = enc
		}
		enc.buf, enc.stack, enc.path = enc.buf[:0], enc.stack[:0], enc.path[:0]
		b, err := enc.encode(args)
		if err != nil {
			err.Tool = name
			return r.rejected(err)
		}
		argsJSON = bytes.Clone(b)
	}
	r.started++
	r.inflight++
	p, resolve, reject := r.rt.NewPromise()
	id := len(r.pend)
	r.pend = append(r.pend, pending{resolve: resolve, reject: reject})
	r.calls.Add(1)
	complete := func(res json.RawMessage, err error) {
		defer r.calls.Done()
		select {
		case r.done <- completion{id: id, result: res, err: err}:
		case <-r.finished:
		}
	}
	if r.async != nil {
		r.async.StartCall(r.callCtx, name, argsJSON, complete)
		r.unflushed = true
	} else {
		go func() { complete(r.host.Call(r.callCtx, name, argsJSON)) }()
	}
	return r.rt.ToValue(p)
}

// rejected returns a promise already rejected with a ToolError for err.
func (r *run) rejected(err *sandbox.Error) goja.Value {
	p, _, reject := r.rt.NewPromise()
	_ = reject(r.toolError(err))
	return r.rt.ToValue(p)
}

// toolError builds the guest's ToolError for err without running guest code:
// a native error object re-parented to ToolError.prototype, with data
// properties only.
func (r *run) toolError(err *sandbox.Error) *goja.Object {
	rt := r.rt
	o := rt.NewTypeError("%s", err.Message)
	_ = o.SetPrototype(r.g.toolProto)
	set := func(k string, v any) {
		_ = o.DefineDataProperty(k, rt.ToValue(v), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	}
	set("code", string(err.Code))
	set("hint", err.Hint)
	set("retryable", err.Retryable)
	if err.Tool != "" {
		set("tool", err.Tool)
	}
	if err.Path != "" {
		set("path", err.Path)
	}
	if len(err.AllowedValues) > 0 {
		if b, jerr := json.Marshal(err.AllowedValues); jerr == nil {
			if v, berr := r.buildValue(b); berr == nil {
				set("allowed_values", v)
			}
		}
	}
	if err.Rule != "" {
		set("rule", err.Rule)
	}
	if err.Reason != "" {
		set("reason", err.Reason)
	}
	if r.toolErrors == nil {
		r.toolErrors = make(map[*goja.Object]*sandbox.Error)
	}
	r.toolErrors[o] = err
	return o
}
