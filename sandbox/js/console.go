package js

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/sandcall/sandcall/sandbox"
)

// maxLogDropped is how much console output past the budget a program may
// attempt before the run stops with E_OUTPUT_LIMIT.
const maxLogDropped = 1 << 20

// consoleObject builds console.log/info/warn/error/debug. Each call is one
// log entry: the arguments rendered without running guest code, joined by a
// space, control characters escaped, levels other than log prefixed.
func (r *run) consoleObject() *goja.Object {
	c := r.rt.NewObject()
	for _, lv := range [...]struct{ name, prefix string }{
		{"log", ""}, {"info", "[info] "}, {"warn", "[warn] "}, {"error", "[error] "}, {"debug", "[debug] "},
	} {
		prefix := lv.prefix
		fn := r.native(lv.name, func(call goja.FunctionCall) goja.Value {
			r.log(prefix, call.Arguments)
			return goja.Undefined()
		})
		_ = c.DefineDataProperty(lv.name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	}
	return c
}

func (r *run) log(prefix string, args []goja.Value) {
	r.logMu.Lock()
	room := r.limits.MaxLogBytes - r.logBytes
	r.logMu.Unlock()
	if room < 0 {
		room = 0
	}
	in := inspector{r: r, max: room}
	in.b = append(in.b, prefix...)
	for i, a := range args {
		if i > 0 {
			in.b = append(in.b, ' ')
			in.want++
		}
		if s, ok := a.(goja.String); ok {
			in.logString(s, false)
		} else {
			in.value(a, 0)
		}
	}
	in.want += len(prefix)
	kept, keep := "", false
	if r.sink != nil {
		// Stream what is kept, outside the lock, once it is recorded.
		defer func() {
			if keep {
				r.sink.Log(kept)
			}
		}()
	}
	r.logMu.Lock()
	defer r.logMu.Unlock()
	// An empty entry costs a byte: console.log() in a loop must fill the
	// budget too, or the kept entries would grow without bound.
	if cost := max(len(in.b), 1); cost <= room && !in.over {
		kept, keep = string(in.b), true
		r.logs = append(r.logs, kept)
		r.logBytes += cost
		return
	}
	r.logsTruncated = true
	if room > 0 {
		cut := in.b[:room]
		for len(cut) > 0 && !utf8.Valid(cut) {
			cut = cut[:len(cut)-1]
		}
		kept, keep = string(cut), true
		r.logs = append(r.logs, kept)
		r.logBytes += len(cut)
	}
	r.logBytes = r.limits.MaxLogBytes
	dropped := in.want - room
	if dropped < 1 {
		dropped = 1
	}
	r.logDropped += dropped
	if r.logDropped > maxLogDropped {
		r.stop(sandbox.Errorf(sandbox.EOutputLimit,
			"Log less: console output is capped; return data in the result instead.",
			fmt.Sprintf("the program kept logging past its %d-byte log budget", r.limits.MaxLogBytes)))
	}
}

// inspector renders guest values for logs and error messages without
// running guest code: proxies, accessors and functions are shown by kind,
// never invoked.
type inspector struct {
	r    *run
	b    []byte
	max  int
	over bool
	want int // approximate full length
	seen []*goja.Object
}

func (in *inspector) full() bool {
	if len(in.b) > in.max {
		in.over = true
	}
	return in.over
}

func (in *inspector) write(s string) {
	in.want += len(s)
	if !in.full() {
		in.b = append(in.b, s...)
	}
}

// logString writes a string with control characters escaped; quoted adds
// JSON-style quotes (for strings inside objects).
func (in *inspector) logString(s goja.String, quoted bool) {
	n := s.Length()
	in.want += n
	if in.full() {
		return
	}
	room := in.max - len(in.b) + 1
	if n > room {
		s = s.Substring(0, room)
		in.over = true
	}
	gs := s.String()
	if quoted {
		in.b = append(in.b, '"')
	}
	for _, c := range gs {
		switch {
		case c == '\n':
			in.b = append(in.b, '\\', 'n')
		case c == '\t':
			in.b = append(in.b, '\\', 't')
		case c == '\r':
			in.b = append(in.b, '\\', 'r')
		case c == '"' && quoted:
			in.b = append(in.b, '\\', '"')
		case c == '\\' && quoted:
			in.b = append(in.b, '\\', '\\')
		case c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0x2028 || c == 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069):
			in.b = append(in.b, fmt.Sprintf("\\u%04x", c)...)
		default:
			in.b = utf8.AppendRune(in.b, c)
		}
	}
	if quoted {
		in.b = append(in.b, '"')
	}
}

const inspectDepth = 4

func (in *inspector) value(v goja.Value, depth int) {
	if in.full() {
		in.want++
		return
	}
	switch x := v.(type) {
	case nil:
		in.write("undefined")
		return
	case *goja.Object:
		in.object(x, depth)
		return
	case *goja.Symbol:
		in.write(x.String())
		return
	case goja.String:
		in.logString(x, true)
		return
	}
	switch {
	case goja.IsUndefined(v):
		in.write("undefined")
	case goja.IsNull(v):
		in.write("null")
	case goja.IsBigInt(v):
		in.write(v.String() + "n")
	case goja.IsNumber(v):
		in.write(numberString(v))
	default:
		if v.ExportType() == boolType {
			in.write(strconv.FormatBool(v.ToBoolean()))
		} else {
			in.write("?")
		}
	}
}

func numberString(v goja.Value) string {
	if v.ExportType() == int64Type {
		return strconv.FormatInt(v.ToInteger(), 10)
	}
	f := v.ToFloat()
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return string(appendNumber(nil, f))
}

func (in *inspector) object(o *goja.Object, depth int) {
	r := in.r
	et := o.ExportType()
	if et == proxyType {
		in.write("[Proxy]")
		return
	}
	if et != nil && et.Kind() == funcType.Kind() {
		in.write("[Function]")
		return
	}
	for _, s := range in.seen {
		if s == o {
			in.write("[Circular]")
			return
		}
	}
	if et == timeType {
		e := encoder{r: r, mode: modeResult, max: 64}
		if _, err := e.date(o); err == nil {
			in.write(string(e.buf))
			return
		}
	}
	if r.isError(o) {
		in.write(r.errorSummary(o))
		return
	}
	isArray := (et == arrayType || et == lazyArrayType) && o.ClassName() == "Array"
	if depth >= inspectDepth {
		if isArray {
			in.write("[Array]")
		} else {
			in.write("[Object]")
		}
		return
	}
	in.seen = append(in.seen, o)
	defer func() { in.seen = in.seen[:len(in.seen)-1] }()
	if isArray {
		n := o.Get("length").ToInteger()
		in.write("[")
		for i := int64(0); i < n; i++ {
			if i > 0 {
				in.write(",")
			}
			if i >= 100 || in.full() {
				in.write(fmt.Sprintf("... %d more", n-i))
				break
			}
			in.prop(o, r.rt.ToValue(i), depth)
		}
		in.write("]")
		return
	}
	in.write("{")
	for i, k := range o.Keys() {
		if i > 0 {
			in.write(",")
		}
		if in.full() {
			break
		}
		in.logString(r.rt.ToValue(k).(goja.String), true)
		in.write(":")
		in.prop(o, r.rt.ToValue(k), depth)
	}
	in.write("}")
}

func (in *inspector) prop(o *goja.Object, key goja.Value, depth int) {
	v, kind := in.r.ownData(o, key)
	switch kind {
	case propAccessor:
		in.write("[Getter/Setter]")
	case propMissing:
		in.write("undefined")
	default:
		in.value(v, depth+1)
	}
}

// inspect renders v in at most max bytes.
func (r *run) inspect(v goja.Value, max int) string {
	in := inspector{r: r, max: max}
	in.value(v, 0)
	return sandbox.Cap(string(in.b), max)
}
