package js

import (
	"bytes"
	"encoding/json"

	"github.com/dop251/goja"

	"github.com/sandcall/sandcall/sandbox"
)

// maxOptionsBytes caps the encoded options object of a tool call.
const maxOptionsBytes = 256

// callOptions returns the name to call for tools.<name>(args, options):
// sandbox.OpaquePrefix+name when options is {opaque: true}. Options are
// read with the bounded converter (no getter or proxy runs); anything but
// undefined, null or an object with only a boolean opaque is an error.
func (r *run) callOptions(name string, opts goja.Value) (string, *sandbox.Error) {
	if opts == nil || goja.IsUndefined(opts) || goja.IsNull(opts) {
		return name, nil
	}
	bad := &sandbox.Error{Code: sandbox.EToolArgs, Tool: name,
		Message: "the second argument of a tool call must be {opaque: true} or omitted",
		Hint:    "Pass the arguments as one object; pass {opaque: true} second to get the result as a handle."}
	enc := r.encoder(modeArgs, maxOptionsBytes)
	b, err := enc.encode(opts)
	if err != nil {
		return "", bad
	}
	var o struct {
		Opaque *bool `json:"opaque"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if dec.Decode(&o) != nil {
		return "", bad
	}
	if o.Opaque != nil && *o.Opaque {
		return sandbox.OpaquePrefix + name, nil
	}
	return name, nil
}

// callWithOptions is tools.<name>(args, options).
func (r *run) callWithOptions(name string, args, opts goja.Value) goja.Value {
	n, err := r.callOptions(name, opts)
	if err != nil {
		return r.rejected(err)
	}
	return r.callTool(n, args)
}

// readHandleFunc is tools.$read(handle): the value of an opaque handle.
func (r *run) readHandleFunc() *goja.Object {
	return r.native(sandbox.ReadHandle, func(c goja.FunctionCall) goja.Value {
		return r.callTool(sandbox.ReadHandle, c.Argument(0))
	})
}
