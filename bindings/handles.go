package bindings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// Opaque handles (FIDES's hidden variables). A call named
// sandbox.OpaquePrefix+tool returns {"$handle": "h<n>"} instead of the
// result; the broker keeps the value and its label, and the run's label is
// not raised. Passing the handle object anywhere in a later call's
// arguments puts the value back in its place at the broker, before the
// arguments are validated, and joins its label into that call's argument
// label only (policy.Request.Label, `label` in a rule). sandbox.ReadHandle
// returns the value to the program, and joins its label into the run, as
// reading any result does.
//
// Handles belong to their run and die with it.
const (
	// MaxHandles caps the handles one run may hold.
	MaxHandles = 256
	// MaxHandleBytes caps the bytes of the values one run's handles hold.
	MaxHandleBytes = 32 << 20
)

// handleKey is the one key of a handle object.
const handleKey = "$handle"

type handle struct {
	value json.RawMessage
	src   policy.Source // the call that made it, with its label
}

// handles is a run's handle table. Guarded by runFlow.mu.
type handles struct {
	list  []handle
	bytes int
}

// keep stores a result as a handle and returns the handle object.
func (r *run) keepHandle(value json.RawMessage, src policy.Source) (json.RawMessage, *sandbox.Error) {
	f := &r.flow
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.handles.list) >= MaxHandles || f.handles.bytes+len(value) > MaxHandleBytes {
		return nil, &sandbox.Error{Code: sandbox.EOutputLimit, Tool: src.Tool,
			Message: fmt.Sprintf("the run holds too many opaque handles (at most %d, %d MiB)", MaxHandles, MaxHandleBytes>>20),
			Hint:    "Read or pass fewer results as handles; call without {opaque: true} to get the value."}
	}
	f.handles.list = append(f.handles.list, handle{value: value, src: src})
	f.handles.bytes += len(value)
	return json.RawMessage(`{"` + handleKey + `":"h` + strconv.Itoa(len(f.handles.list)) + `"}`), nil
}

// lookupHandle returns the handle named id ("h3"), if the run holds it.
func (r *run) lookupHandle(id string) (handle, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "h"))
	if !strings.HasPrefix(id, "h") || err != nil {
		return handle{}, false
	}
	f := &r.flow
	f.mu.Lock()
	defer f.mu.Unlock()
	if n < 1 || n > len(f.handles.list) {
		return handle{}, false
	}
	return f.handles.list[n-1], true
}

func unknownHandle(tool, id string) *sandbox.Error {
	return &sandbox.Error{Code: sandbox.EToolArgs, Tool: tool,
		Message: fmt.Sprintf("no opaque handle %q in this run", safeName(id)),
		Hint:    "Pass a handle exactly as a call with {opaque: true} returned it, in the same run."}
}

// readHandle is the sandbox.ReadHandle call: the value, its label joined
// into the run.
func (r *run) readHandle(args json.RawMessage) (json.RawMessage, *sandbox.Error) {
	var h map[string]json.RawMessage
	var id string
	if json.Unmarshal(args, &h) != nil || len(h) != 1 || json.Unmarshal(h[handleKey], &id) != nil {
		return nil, &sandbox.Error{Code: sandbox.EToolArgs, Tool: sandbox.ReadHandle,
			Message: "tools.$read takes one opaque handle ({\"$handle\": \"h1\"})",
			Hint:    "Pass a handle exactly as a call with {opaque: true} returned it."}
	}
	hd, ok := r.lookupHandle(id)
	if !ok {
		return nil, unknownHandle(sandbox.ReadHandle, id)
	}
	r.flow.join(hd.src.Label, hd.src)
	return hd.value, nil
}

// handleLabels is what the handles in a call's arguments carry: the join
// of their labels, their sources, and the join per top-level argument;
// and where they were (JSON pointers into the arguments).
type handleLabels struct {
	label   policy.Label
	sources []policy.Source
	byArg   map[string]policy.Label
	paths   []string
}

// resolveHandles replaces every handle object in args by its value, and
// returns their labels. Arguments without the "$handle" key are returned
// as they are, unparsed.
func (r *run) resolveHandles(tool string, args json.RawMessage) (json.RawMessage, handleLabels, *sandbox.Error) {
	var hl handleLabels
	if !bytes.Contains(args, []byte(`"`+handleKey+`"`)) {
		return args, hl, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return args, hl, nil // validation reports it
	}
	var bad *sandbox.Error
	// walk replaces the handles under x (at JSON pointer path) and joins
	// their labels into *l.
	var walk func(x any, path string, l *policy.Label) any
	walk = func(x any, path string, l *policy.Label) any {
		switch t := x.(type) {
		case map[string]any:
			if id, ok := t[handleKey].(string); ok && len(t) == 1 {
				hd, found := r.lookupHandle(id)
				if !found {
					if bad == nil {
						bad = unknownHandle(tool, id)
					}
					return x
				}
				*l = l.Join(hd.src.Label)
				if !hd.src.Label.IsZero() && len(hl.sources) < policy.MaxSources {
					hl.sources = append(hl.sources, hd.src)
				}
				hl.paths = append(hl.paths, path)
				return hd.value
			}
			for k, e := range t {
				t[k] = walk(e, path+"/"+pointerToken(k), l)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e, path+"/"+strconv.Itoa(i), l)
			}
		}
		return x
	}
	if obj, ok := v.(map[string]any); ok {
		for k, e := range obj {
			var l policy.Label
			obj[k] = walk(e, "/"+pointerToken(k), &l)
			if !l.IsZero() {
				if hl.byArg == nil {
					hl.byArg = make(map[string]policy.Label)
				}
				hl.byArg[k] = l
				hl.label = hl.label.Join(l)
			}
		}
	} else {
		v = walk(v, "", &hl.label)
	}
	if bad != nil {
		return nil, hl, bad
	}
	out, err := sandbox.MarshalJSON(v)
	if err != nil {
		return nil, hl, &sandbox.Error{Code: sandbox.EToolArgs, Tool: tool, Message: "the arguments could not be rebuilt with the handles' values"}
	}
	return out, hl, nil
}

// pointerToken escapes a key for a JSON pointer (RFC 6901).
func pointerToken(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// touches reports whether the value at JSON pointer path holds, or is
// inside, a value that came from a handle: an error about it could quote
// the handle's content.
func (hl *handleLabels) touches(path string) bool {
	for _, p := range hl.paths {
		if p == path || strings.HasPrefix(p, path+"/") || strings.HasPrefix(path, p+"/") || path == "" || p == "" {
			return true
		}
	}
	return false
}

// hideHandles returns a validation error that tells nothing of the
// handles' content when it is about a value that holds one (or is inside
// one): the path and the schema's allowed values stay, the message and
// hint, which quote the value given, are replaced. Others are returned as
// they are.
func (hl *handleLabels) hideHandles(e *sandbox.Error) *sandbox.Error {
	if len(hl.paths) == 0 || !hl.touches(e.Path) {
		return e
	}
	c := *e
	where := "the arguments"
	if c.Path != "" {
		where = "argument " + strconv.Quote(safeName(c.Path))
	}
	c.Message = where + " do not match the tool's input schema; the value comes from an opaque handle, whose content is not shown"
	if c.Path != "" {
		c.Message = where + " does not match the tool's input schema; its value comes from an opaque handle, whose content is not shown"
	}
	c.Hint = "Pass a handle only where the tool takes that kind of value (see its declaration with describe_tools); " +
		"to look at the value, read it with tools.$read(handle)."
	return &c
}

// handleCall takes the handle forms of a call apart: a name with
// sandbox.OpaquePrefix is the tool's name and opaque; sandbox.ReadHandle is
// answered here (done). Direct callers have no handles: their names are
// left as they are (and are unknown tools).
func (r *run) handleCall(name string, args json.RawMessage, rec *auditCall) (tool string, opaque bool, res json.RawMessage, err *sandbox.Error, done bool) {
	if r.caller != tools.Code || !strings.HasPrefix(name, "$") {
		return name, false, nil, nil, false
	}
	if n, ok := strings.CutPrefix(name, sandbox.OpaquePrefix); ok {
		return n, true, nil, nil, false
	}
	if name == sandbox.ReadHandle {
		rec.decision = "read_handle"
		res, err = r.readHandle(args)
		return name, false, res, err, true
	}
	return name, false, nil, nil, false
}
