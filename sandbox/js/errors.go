package js

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/dop251/goja"

	"github.com/sandcall/sandcall/sandbox"
)

const guestHint = "Fix the error at the reported line, or catch it with try/catch."

// mapErr maps an error returned by goja to the run's error.
func (r *run) mapErr(err error) *sandbox.Error {
	switch x := err.(type) {
	case *goja.InterruptedError:
		if se := r.stopped(); se != nil {
			return se
		}
		if se, ok := x.Value().(*sandbox.Error); ok {
			return se
		}
		return r.ctxError()
	case *goja.StackOverflowError:
		return sandbox.Errorf(sandbox.EStack,
			"Recurse less deeply: use a loop or an explicit stack.",
			fmt.Sprintf("the call stack exceeded %d frames", r.limits.MaxStackFrames))
	case *goja.Exception:
		if se := r.stopped(); se != nil {
			return se
		}
		return r.describeThrown(x.Value())
	}
	if se := r.stopped(); se != nil {
		return se
	}
	return sandbox.Errorf(sandbox.EInternal, "", "the JavaScript engine failed")
}

// describeThrown turns an uncaught value into the run's error without
// running guest code. A ToolError the engine created ends the run with the
// host's error; anything else is E_GUEST_ERROR.
func (r *run) describeThrown(v goja.Value) *sandbox.Error {
	if se := r.stopped(); se != nil {
		return se
	}
	if o, ok := v.(*goja.Object); ok {
		if se, ok := r.toolErrors[o]; ok {
			return se
		}
		if r.isError(o) {
			return sandbox.Errorf(sandbox.EGuestError, guestHint, "Uncaught "+r.errorSummary(o)+r.errorLocation(o))
		}
	}
	return sandbox.Errorf(sandbox.EGuestError, guestHint+" Throw an Error (not a plain value) to get its line.",
		"Uncaught "+r.inspect(v, 1024))
}

// isError reports whether Error.prototype is on o's prototype chain, without
// running guest code (a proxy on the way makes it false).
func (r *run) isError(o *goja.Object) bool {
	for depth := 0; o != nil && depth < 1000; depth++ {
		if o.ExportType() == proxyType {
			return false
		}
		if o == r.g.errorProto {
			return true
		}
		o = o.Prototype()
	}
	return false
}

// errorParts reads name and message of an Error as data properties; safe
// is false if either needs guest code (an accessor, a proxy, an object).
func (r *run) errorParts(o *goja.Object) (name, msg string, safe bool) {
	safe = true
	name = "Error"
	if v, ok := r.lookup(o, "name"); !ok {
		safe = false
	} else if _, obj := v.(*goja.Object); obj {
		safe = false
	} else if s, ok := v.(goja.String); ok {
		name = s.String()
	}
	if v, ok := r.lookup(o, "message"); !ok {
		safe = false
	} else if _, obj := v.(*goja.Object); obj {
		safe = false
	} else if _, sym := v.(*goja.Symbol); sym {
		safe = false
	} else if !goja.IsUndefined(v) {
		if s, ok := v.(goja.String); ok {
			msg = r.inspectString(s, 1024)
		} else {
			msg = r.inspect(v, 64)
		}
	}
	return name, msg, safe
}

func (r *run) inspectString(s goja.String, max int) string {
	in := inspector{r: r, max: max}
	in.logString(s, false)
	return sandbox.Cap(string(in.b), max)
}

// errorSummary is "Name: message".
func (r *run) errorSummary(o *goja.Object) string {
	name, msg, _ := r.errorParts(o)
	if msg == "" {
		return name
	}
	return name + ": " + msg
}

var framePos = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(regexp.QuoteMeta(srcName) + `:(\d+):(\d+)`) })

// errorLocation returns " at line L:C" from the error's stack, read only
// when that runs no guest code (goja formats the stack from name and
// message on first access).
func (r *run) errorLocation(o *goja.Object) string {
	if _, _, safe := r.errorParts(o); !safe {
		return ""
	}
	if mv, ok := r.lookup(o, "message"); ok {
		if s, ok := mv.(goja.String); ok && s.Length() > 1<<16 {
			return ""
		}
	}
	sv, kind := r.ownData(o, r.rt.ToValue("stack"))
	if kind != propData {
		return ""
	}
	s, ok := sv.(goja.String)
	if !ok {
		return ""
	}
	if s.Length() > 1<<16 {
		s = s.Substring(0, 1<<16)
	}
	m := framePos().FindStringSubmatch(s.String())
	if m == nil {
		return ""
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	line, col = userPos(r.job.Program.Source, line, col)
	if line == 0 {
		return ""
	}
	return fmt.Sprintf(" (line %d:%d)", line, col)
}
