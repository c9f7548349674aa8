package js

import (
	"bytes"
	"encoding/json"

	"github.com/dop251/goja"

	"github.com/sandcall/sandcall/sandbox"
)

// stateObject builds the state global (docs/guest-api.md): get, set,
// delete and keys, each a thin wrapper that sends one of the sandbox.State*
// calls to the host, like a tool call (it counts against the call limit).
// The host keeps the values between runs, per principal.
func (r *run) stateObject() *goja.Object {
	rt := r.rt
	o := rt.NewObject()
	obj := func(kv ...any) *goja.Object {
		a := rt.NewObject()
		for i := 0; i+1 < len(kv); i += 2 {
			if v, ok := kv[i+1].(goja.Value); ok && goja.IsUndefined(v) {
				continue
			}
			_ = a.Set(kv[i].(string), kv[i+1])
		}
		return a
	}
	def := func(name string, fn func(c goja.FunctionCall) goja.Value) {
		_ = o.DefineDataProperty(name, r.native(name, fn), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	def("get", func(c goja.FunctionCall) goja.Value {
		return r.callTool(sandbox.StateGet, obj("key", c.Argument(0)))
	})
	def("set", func(c goja.FunctionCall) goja.Value {
		ttl, err := r.stateTTL(c.Argument(2))
		if err != nil {
			return r.rejected(err)
		}
		return r.callTool(sandbox.StateSet, obj("key", c.Argument(0), "value", c.Argument(1), "ttl_s", ttl))
	})
	def("delete", func(c goja.FunctionCall) goja.Value {
		return r.callTool(sandbox.StateDelete, obj("key", c.Argument(0)))
	})
	def("keys", func(c goja.FunctionCall) goja.Value {
		return r.callTool(sandbox.StateKeys, obj("prefix", c.Argument(0)))
	})

	return o
}

// stateTTL reads state.set's options, {ttl_s: seconds} or omitted, with
// the bounded converter (no getter or proxy runs); it returns the ttl_s
// value to send, or undefined.
func (r *run) stateTTL(opts goja.Value) (goja.Value, *sandbox.Error) {
	if opts == nil || goja.IsUndefined(opts) || goja.IsNull(opts) {
		return goja.Undefined(), nil
	}
	bad := &sandbox.Error{Code: sandbox.EToolArgs, Tool: sandbox.StateSet,
		Message: "the third argument of state.set must be {ttl_s: seconds} or omitted",
		Hint:    "Pass how long to keep the value as {ttl_s: 3600}, or omit it for the server's default."}
	b, err := r.encoder(modeArgs, maxOptionsBytes).encode(opts)
	if err != nil {
		return nil, bad
	}
	var o struct {
		TTL *float64 `json:"ttl_s"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if dec.Decode(&o) != nil {
		return nil, bad
	}
	if o.TTL == nil {
		return goja.Undefined(), nil
	}
	return r.rt.ToValue(*o.TTL), nil
}
