package wasm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/jsonscan"
)

// hostModule is the import module name of the ABI (bindings/abi.md).
const hostModule = "sandcall"

// ABIVersion is the version of the host ABI that abi_version returns.
const ABIVersion = 1

// ABI error codes (negative i32 results).
const (
	errBadArgument  = -1
	errUnknown      = -2
	errTooSmall     = -3
	errTooMany      = -4
	errRunEnded     = -5
	errNotStored    = -6 // progress: not valid JSON, or over the result budget
	statusOK        = 0
	statusToolError = 1
)

var i32 = api.ValueTypeI32

type hostFunc struct {
	params, results []api.ValueType
	fn              func(r *run, mod api.Module, stack []uint64)
}

// hostFuncs is the ABI, version 1. Every function bounds-checks each
// pointer/length pair against the guest's memory before reading, and copies
// bytes out of guest memory before looking at them.
var hostFuncs = map[string]hostFunc{
	"abi_version": {nil, []api.ValueType{i32}, func(r *run, _ api.Module, s []uint64) {
		s[0] = ret(ABIVersion)
	}},
	"call": {[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}, func(r *run, m api.Module, s []uint64) {
		id := r.startCall(m, s)
		if id > 0 {
			h := r.handles[id]
			if !r.await(h) {
				id = errRunEnded
			}
		}
		s[0] = ret(id)
	}},
	"call_async": {[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}, func(r *run, m api.Module, s []uint64) {
		s[0] = ret(r.startCall(m, s))
	}},
	"wait": {[]api.ValueType{i32}, []api.ValueType{i32}, func(r *run, _ api.Module, s []uint64) {
		h, code := r.completed(int32(uint32(s[0])))
		if h == nil {
			s[0] = ret(code)
			return
		}
		s[0] = ret(h.status)
	}},
	"result_len": {[]api.ValueType{i32}, []api.ValueType{i32}, func(r *run, _ api.Module, s []uint64) {
		h, code := r.completed(int32(uint32(s[0])))
		if h == nil {
			s[0] = ret(code)
			return
		}
		s[0] = ret(int32(len(h.payload)))
	}},
	"result_read": {[]api.ValueType{i32, i32, i32}, []api.ValueType{i32}, func(r *run, m api.Module, s []uint64) {
		id := int32(uint32(s[0]))
		ptr, n := uint32(s[1]), uint32(s[2])
		if !inBounds(m, ptr, n) {
			s[0] = ret(errBadArgument)
			return
		}
		h, code := r.completed(id)
		if h == nil {
			s[0] = ret(code)
			return
		}
		if uint64(n) < uint64(len(h.payload)) {
			s[0] = ret(errTooSmall)
			return
		}
		if !memory(m).Write(ptr, h.payload) {
			s[0] = ret(errBadArgument)
			return
		}
		delete(r.handles, id)
		s[0] = ret(int32(len(h.payload)))
	}},
	"input_len": {nil, []api.ValueType{i32}, func(r *run, _ api.Module, s []uint64) {
		s[0] = ret(int32(len(r.input)))
	}},
	"input_read": {[]api.ValueType{i32, i32}, []api.ValueType{i32}, func(r *run, m api.Module, s []uint64) {
		ptr, n := uint32(s[0]), uint32(s[1])
		switch {
		case !inBounds(m, ptr, n):
			s[0] = ret(errBadArgument)
		case uint64(n) < uint64(len(r.input)):
			s[0] = ret(errTooSmall)
		case !memory(m).Write(ptr, r.input):
			s[0] = ret(errBadArgument)
		default:
			s[0] = ret(int32(len(r.input)))
		}
	}},
	"set_result": {[]api.ValueType{i32, i32}, []api.ValueType{i32}, func(r *run, m api.Module, s []uint64) {
		ptr, n := uint32(s[0]), uint32(s[1])
		if !inBounds(m, ptr, n) {
			s[0] = ret(errBadArgument)
			return
		}
		if r.ending() {
			s[0] = ret(errRunEnded)
			return
		}
		r.resultSet = true
		if int64(n) > int64(r.resultCap) {
			r.result, r.resultOver = nil, int(n)
		} else {
			r.result, r.resultOver = read(m, ptr, n), 0
		}
		s[0] = ret(0)
	}},
	"progress": {[]api.ValueType{i32, i32}, []api.ValueType{i32}, func(r *run, m api.Module, s []uint64) {
		ptr, n := uint32(s[0]), uint32(s[1])
		switch {
		case !inBounds(m, ptr, n):
			s[0] = ret(errBadArgument)
		case r.ending():
			s[0] = ret(errRunEnded)
		case int64(n) > int64(r.limits.MaxResultBytes):
			s[0] = ret(errNotStored)
		default:
			var b bytes.Buffer
			if v := read(m, ptr, n); !utf8.Valid(v) || json.Compact(&b, v) != nil {
				s[0] = ret(errNotStored)
				return
			}
			r.setPartial(b.Bytes())
			s[0] = ret(0)
		}
	}},
	"log": {[]api.ValueType{i32, i32}, nil, func(r *run, m api.Module, s []uint64) {
		ptr, n := uint32(s[0]), uint32(s[1])
		if !inBounds(m, ptr, n) || r.ending() {
			return
		}
		// Copy no more than the budget can use (escaping never shrinks
		// text by more than 3 bytes per byte of invalid UTF-8).
		room := max(0, r.limits.MaxLogBytes-r.logBytes)
		take := uint32(min(int64(n), int64(room)+4))
		r.log("", read(m, ptr, take), int(n))
	}},
}

// ret encodes an i32 result.
func ret(v int32) uint64 { return uint64(uint32(v)) }

// memory returns the guest's exported memory "memory", or nil.
func memory(m api.Module) api.Memory {
	return m.ExportedMemory("memory")
}

// inBounds reports whether [ptr, ptr+n) lies inside the guest's memory.
func inBounds(m api.Module, ptr, n uint32) bool {
	mem := memory(m)
	if mem == nil {
		return false
	}
	return uint64(ptr)+uint64(n) <= uint64(mem.Size())
}

// read copies [ptr, ptr+n) out of guest memory; the range must be in bounds.
func read(m api.Module, ptr, n uint32) []byte {
	b, ok := memory(m).Read(ptr, n)
	if !ok {
		return nil
	}
	return bytes.Clone(b)
}

// instantiateHost provides the sandcall host module to r. In a run whose
// compiled code is not interrupted (Config.NoInterrupt), a host function
// called once the run is ending unwinds the guest (errUnwind) instead of
// returning to it.
func instantiateHost(ctx context.Context, r wazero.Runtime) error {
	b := r.NewHostModuleBuilder(hostModule)
	for name, hf := range hostFuncs {
		fn := hf.fn
		b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
				r := runOf(ctx)
				fn(r, m, stack)
				r.unwindIfEnding()
			}), hf.params, hf.results).
			WithName(name).
			Export(name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

// startCall reads a call's name and arguments, checks them and starts the
// call in its own goroutine. It returns the handle, or an ABI error.
func (r *run) startCall(m api.Module, s []uint64) int32 {
	namePtr, nameLen, argsPtr, argsLen := uint32(s[0]), uint32(s[1]), uint32(s[2]), uint32(s[3])
	if !inBounds(m, namePtr, nameLen) || !inBounds(m, argsPtr, argsLen) {
		return errBadArgument
	}
	if r.ending() {
		return errRunEnded
	}
	if len(r.handles) >= MaxHandles {
		return errTooMany
	}
	r.nextHandle++
	id := r.nextHandle
	h := &handle{done: make(chan struct{})}
	r.handles[id] = h

	if nameLen == 0 || nameLen > maxNameBytes {
		r.fail(h, sandbox.Errorf(sandbox.EToolUnknown, "Use search_tools to find the tool's name.",
			fmt.Sprintf("the tool name must be 1 to %d bytes", maxNameBytes)))
		return id
	}
	name := string(read(m, namePtr, nameLen))
	if !utf8.ValidString(name) {
		r.fail(h, sandbox.Errorf(sandbox.EToolUnknown, "Use search_tools to find the tool's name.", "the tool name is not valid UTF-8"))
		return id
	}
	if r.started >= r.limits.MaxCalls {
		r.fail(h, &sandbox.Error{Code: sandbox.EToolCallLimit,
			Message: fmt.Sprintf("the run reached its limit of %d tool calls", r.limits.MaxCalls),
			Hint:    "Make fewer calls: batch work, or use tools that return more per call.", Tool: name})
		return id
	}
	if argsLen > maxArgsBytes {
		r.fail(h, &sandbox.Error{Code: sandbox.EToolArgs, Tool: name,
			Message: fmt.Sprintf("the arguments are %d bytes, over the limit of %d", argsLen, maxArgsBytes),
			Hint:    "Pass smaller arguments."})
		return id
	}
	var args []byte
	if argsLen == 0 {
		args = []byte("{}")
	} else {
		raw := read(m, argsPtr, argsLen)
		var b bytes.Buffer
		b.Grow(len(raw))
		if err := json.Compact(&b, raw); err != nil {
			r.fail(h, &sandbox.Error{Code: sandbox.EToolArgs, Tool: name,
				Message: "the arguments are not valid JSON", Hint: "Pass the arguments as the UTF-8 bytes of one JSON value, usually an object."})
			return id
		}
		args = b.Bytes()
		if jsonscan.Depth(args) > maxArgsDepth {
			r.fail(h, &sandbox.Error{Code: sandbox.EToolArgs, Tool: name,
				Message: fmt.Sprintf("the arguments nest more than %d levels deep", maxArgsDepth), Hint: "Pass flatter arguments."})
			return id
		}
	}
	r.started++
	r.calls.Add(1)
	go func() {
		defer r.calls.Done()
		res, err := r.host.Call(r.callCtx, name, args)
		if err == nil && !json.Valid(res) {
			err = &sandbox.Error{Code: sandbox.EToolFailed, Tool: name, Message: "the tool returned invalid JSON"}
		}
		if err != nil {
			r.fail(h, sandbox.AsError(err, sandbox.EToolFailed))
			return
		}
		h.status, h.payload = statusOK, res
		close(h.done)
	}()
	return id
}

// fail completes h with a tool error, encoded like JSON.stringify would
// (no HTML escaping), so a guest that passes it on gives the bytes a
// JavaScript program would.
func (r *run) fail(h *handle, e *sandbox.Error) {
	b, err := errorJSON(e)
	if err != nil {
		b, _ = errorJSON(sandbox.Errorf(sandbox.EToolFailed, "", "the tool failed"))
	}
	h.status, h.payload = statusToolError, b
	close(h.done)
}

func errorJSON(e *sandbox.Error) ([]byte, error) { return sandbox.MarshalJSON(e) }

// await blocks the guest until h completes, or reports false when the run
// ends first.
func (r *run) await(h *handle) bool {
	select {
	case <-h.done:
		return true
	default:
	}
	select {
	case <-h.done:
		return true
	case <-r.guestCtx.Done():
		return false
	}
}

// completed returns the handle id once its call has completed, or nil and
// an ABI error.
func (r *run) completed(id int32) (*handle, int32) {
	h := r.handles[id]
	if h == nil {
		return nil, errUnknown
	}
	if !r.await(h) {
		return nil, errRunEnded
	}
	return h, 0
}
