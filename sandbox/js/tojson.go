package js

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/sandcall/sandcall/sandbox"
)

// Bounds of the guest→JSON converter.
const (
	// maxArgsDepth bounds the nesting of tool arguments.
	maxArgsDepth = 64
	// maxArgsBytes bounds the compact JSON of one call's arguments.
	maxArgsBytes = 1 << 20
	// maxResultDepth bounds the nesting of the program's result.
	maxResultDepth = 256
	// maxStringifyDepth bounds the nesting JSON.stringify and JSON.parse
	// accept in the guest.
	maxStringifyDepth = 1000
)

// encMode selects what the converter is converting for; it decides the
// error codes and how values that would need guest code are treated.
type encMode int

const (
	// modeArgs converts tool arguments: anything that would run guest code
	// (accessors, proxies) is E_TOOL_ARGS; toJSON methods other than Date's
	// are not called.
	modeArgs encMode = iota
	// modeResult converts the program's result, like modeArgs but with
	// E_RESULT_INVALID and E_OUTPUT_LIMIT.
	modeResult
	// modeStringify is the fast path of the guest's JSON.stringify: anything
	// that would run guest code (accessors, proxies, toJSON, boxed
	// primitives) makes it give up with errDynamic, and goja's own
	// implementation takes over.
	modeStringify
)

type encErrKind int

const (
	errDynamic encErrKind = iota + 1 // the value needs guest code to convert
	errDepth
	errCycle
	errBigInt
	errSize
)

type encErr struct {
	kind   encErrKind
	path   string // JSON pointer to the offending value
	detail string
}

// encoder is the one bounded converter by which guest values leave the
// runtime. It never runs guest code: it reads own enumerable data
// properties through the built-in Object.getOwnPropertyDescriptor captured
// before the guest ran, refuses proxies and accessors, and detects cycles.
// Its output is byte for byte what JSON.stringify would produce for the same
// value (property order, number and string formatting).
type encoder struct {
	r        *run
	mode     encMode
	buf      []byte
	max      int
	maxDepth int
	stack    []*goja.Object
	path     []string
	gap      string // indentation (modeStringify only)
	indent   string
	// protoChecked and protoOK cache rawOK's prototype check.
	protoChecked, protoOK bool
}

func (r *run) encoder(mode encMode, max int) *encoder {
	e := &encoder{r: r, mode: mode, max: max}
	switch mode {
	case modeArgs:
		e.maxDepth = maxArgsDepth
	case modeResult:
		e.maxDepth = maxResultDepth
	default:
		e.maxDepth = maxStringifyDepth
	}
	return e
}

// encode converts v. It returns nil bytes (and no error) when v itself is
// not representable (undefined, a function, a symbol), as JSON.stringify
// returns undefined.
func (e *encoder) encode(v goja.Value) ([]byte, *sandbox.Error) {
	ok, err := e.value(v)
	if err != nil {
		return nil, e.sandboxError(err)
	}
	if !ok {
		if e.mode == modeArgs {
			return []byte("null"), nil
		}
		return nil, nil
	}
	return e.buf, nil
}

// sandboxError maps a converter error to the mode's error code.
func (e *encoder) sandboxError(err *encErr) *sandbox.Error {
	where := ""
	if err.path != "" {
		where = " at " + err.path
	}
	if e.mode == modeArgs {
		hint := "Pass plain data as arguments: objects, arrays, strings, numbers, booleans and null, without getters, proxies or cycles."
		msg := "tool arguments" + where + ": " + err.detail
		if err.kind == errSize {
			hint = "Pass less data per call."
		}
		se := sandbox.Errorf(sandbox.EToolArgs, hint, msg)
		se.Path = err.path
		return se
	}
	if err.kind == errSize {
		return sandbox.Errorf(sandbox.EOutputLimit,
			"Return less: aggregate or summarize inside the program, and return only what is needed.",
			fmt.Sprintf("the result is over the limit of %d bytes of JSON", e.max))
	}
	return sandbox.Errorf(sandbox.EResultInvalid,
		"Return plain data: objects, arrays, strings, numbers, booleans and null, without BigInt, getters, proxies or cycles.",
		"the result"+where+" cannot be converted to JSON: "+err.detail)
}

func (e *encoder) fail(kind encErrKind, detail string) *encErr {
	p := ""
	if len(e.path) > 0 {
		var b strings.Builder
		for _, k := range e.path {
			b.WriteByte('/')
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
		}
		p = sandbox.Cap(b.String(), 512)
	}
	return &encErr{kind: kind, path: p, detail: detail}
}

// value writes v and reports whether anything was written (false for
// undefined, functions and symbols, which objects omit and arrays write as
// null).
func (e *encoder) value(v goja.Value) (bool, *encErr) {
	if v == nil || goja.IsUndefined(v) {
		return false, nil
	}
	if goja.IsNull(v) {
		e.buf = append(e.buf, "null"...)
		return true, e.checkSize()
	}
	switch x := v.(type) {
	case *goja.Object:
		return e.object(x)
	case *goja.Symbol:
		return false, nil
	case goja.String:
		return true, e.string(x)
	}
	if goja.IsNumber(v) {
		if v.ExportType() == int64Type {
			e.buf = strconv.AppendInt(e.buf, v.ToInteger(), 10)
		} else {
			e.buf = appendNumber(e.buf, v.ToFloat())
		}
		return true, e.checkSize()
	}
	if goja.IsBigInt(v) {
		return false, e.fail(errBigInt, "BigInt values cannot be serialized in JSON")
	}
	if v.ExportType() == boolType {
		if v.ToBoolean() {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
		return true, e.checkSize()
	}
	return false, nil
}

func (e *encoder) checkSize() *encErr {
	if len(e.buf) > e.max {
		return e.fail(errSize, fmt.Sprintf("over %d bytes", e.max))
	}
	return nil
}

func (e *encoder) object(o *goja.Object) (bool, *encErr) {
	et := o.ExportType()
	if et == proxyType {
		return false, e.fail(errDynamic, "a Proxy cannot be converted (it would run code)")
	}
	if et != nil && et.Kind() == reflect.Func {
		return false, nil
	}
	for _, s := range e.stack {
		if s == o {
			return false, e.fail(errCycle, "the value contains a cycle")
		}
	}
	if len(e.stack) >= e.maxDepth {
		return false, e.fail(errDepth, fmt.Sprintf("nested deeper than %d levels", e.maxDepth))
	}
	switch {
	case et == lazyObjectType || et == lazyArrayType:
		return e.lazy(o, et)
	case et == timeType:
		return e.date(o)
	case et == arrayType && o.ClassName() == "Array":
		if e.mode == modeStringify {
			if err := e.noCallableToJSON(o); err != nil {
				return false, err
			}
		}
		e.stack = append(e.stack, o)
		err := e.array(o)
		e.stack = e.stack[:len(e.stack)-1]
		return err == nil, err
	}
	switch o.ClassName() {
	case "String", "Number", "Boolean":
		if e.mode == modeStringify {
			return false, e.fail(errDynamic, "boxed primitive")
		}
		return e.value(e.r.rt.ToValue(o.Export()))
	case "BigInt":
		return false, e.fail(errBigInt, "BigInt values cannot be serialized in JSON")
	}
	if e.mode == modeStringify {
		if err := e.noCallableToJSON(o); err != nil {
			return false, err
		}
	}
	e.stack = append(e.stack, o)
	err := e.props(o)
	e.stack = e.stack[:len(e.stack)-1]
	return err == nil, err
}

// noCallableToJSON gives up (errDynamic) when JSON.stringify would call a
// toJSON method of o, or when finding out would run guest code.
func (e *encoder) noCallableToJSON(o *goja.Object) *encErr {
	tj, ok := e.r.lookup(o, "toJSON")
	if !ok {
		return e.fail(errDynamic, "toJSON lookup needs code")
	}
	if _, callable := goja.AssertFunction(tj); callable {
		return e.fail(errDynamic, "toJSON")
	}
	return nil
}

// date writes a Date as toJSON would: its ISO string, or null when invalid.
// In modeStringify a Date whose toJSON is not the built-in gives up.
func (e *encoder) date(o *goja.Object) (bool, *encErr) {
	if e.mode == modeStringify {
		tj, ok := e.r.lookup(o, "toJSON")
		if !ok || tj != e.r.g.dateToJSON {
			return false, e.fail(errDynamic, "toJSON")
		}
	}
	t, ok := o.Export().(time.Time)
	if !ok {
		e.buf = append(e.buf, "null"...)
		return true, e.checkSize()
	}
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		// Extended years: goja's own formatting, native code.
		if s, err := e.r.g.dateToISO(o); err == nil {
			if gs, ok := s.(goja.String); ok {
				return true, e.string(gs)
			}
		}
	}
	e.buf = append(e.buf, '"')
	e.buf = appendISODate(e.buf, t)
	e.buf = append(e.buf, '"')
	return true, e.checkSize()
}

// appendISODate formats t (a year in 0..9999) like Date.prototype.toISOString.
func appendISODate(b []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
}

func (e *encoder) newline() {
	if e.gap != "" {
		e.buf = append(e.buf, '\n')
		e.buf = append(e.buf, e.indent...)
	}
}

func (e *encoder) array(o *goja.Object) *encErr {
	n := o.Get("length").ToInteger()
	return e.elements(n, func(i int64, key string) (goja.Value, *encErr) {
		return e.own(o, e.r.rt.ToValue(i), key)
	})
}

// elements writes an array of n elements read by get.
func (e *encoder) elements(n int64, get func(i int64, key string) (goja.Value, *encErr)) *encErr {
	if n > int64(e.max) {
		return e.fail(errSize, fmt.Sprintf("an array of %d elements is over %d bytes", n, e.max))
	}
	e.buf = append(e.buf, '[')
	if n == 0 {
		e.buf = append(e.buf, ']')
		return e.checkSize()
	}
	outer := e.indent
	e.indent += e.gap
	for i := int64(0); i < n; i++ {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.newline()
		key := strconv.FormatInt(i, 10)
		v, err := get(i, key)
		if err != nil {
			return err
		}
		e.path = append(e.path, key)
		ok, err := e.value(v)
		e.path = e.path[:len(e.path)-1]
		if err != nil {
			return err
		}
		if !ok {
			e.buf = append(e.buf, "null"...)
		}
		if err := e.checkSize(); err != nil {
			return err
		}
	}
	e.indent = outer
	e.newline()
	e.buf = append(e.buf, ']')
	return nil
}

func (e *encoder) props(o *goja.Object) *encErr {
	return e.members(o.Keys(), func(_ int, k string) (goja.Value, *encErr) {
		return e.own(o, e.r.rt.ToValue(k), k)
	})
}

// members writes an object with keys, whose values get reads.
func (e *encoder) members(keys []string, get func(i int, key string) (goja.Value, *encErr)) *encErr {
	e.buf = append(e.buf, '{')
	outer := e.indent
	e.indent += e.gap
	first := true
	for i, k := range keys {
		v, err := get(i, k)
		if err != nil {
			return err
		}
		mark := len(e.buf)
		if !first {
			e.buf = append(e.buf, ',')
		}
		e.newline()
		e.buf = appendQuoted(e.buf, k)
		e.buf = append(e.buf, ':')
		if e.gap != "" {
			e.buf = append(e.buf, ' ')
		}
		e.path = append(e.path, k)
		ok, err := e.value(v)
		e.path = e.path[:len(e.path)-1]
		if err != nil {
			return err
		}
		if !ok {
			e.buf = e.buf[:mark]
			continue
		}
		first = false
	}
	e.indent = outer
	if !first {
		e.newline()
	}
	e.buf = append(e.buf, '}')
	return e.checkSize()
}

// lazy writes a lazy tool result (see lazy.go): its original bytes when
// it is unchanged and they are canonical, else member by member, straight
// from the wrapper's state (its properties are all data properties, so no
// descriptor is needed).
func (e *encoder) lazy(o *goja.Object, et reflect.Type) (bool, *encErr) {
	var lo *lazyObject
	var la *lazyArray
	var b *lazyBase
	if et == lazyObjectType {
		lo = o.Export().(*lazyObject)
		b = &lo.lazyBase
	} else {
		la = o.Export().(*lazyArray)
		b = &la.lazyBase
	}
	if b.canonical() && e.gap == "" && len(e.stack)+int(b.doc.nodes[b.node].height) <= e.maxDepth &&
		(e.mode != modeStringify || e.rawOK(b)) {
		raw := b.raw()
		if len(e.buf)+len(raw) > e.max {
			return false, e.fail(errSize, fmt.Sprintf("over %d bytes", e.max))
		}
		e.buf = append(e.buf, raw...)
		return true, nil
	}
	if e.mode == modeStringify {
		if err := e.noCallableToJSON(o); err != nil {
			return false, err
		}
	}
	e.stack = append(e.stack, o)
	var err *encErr
	if la != nil {
		err = e.elements(int64(la.Len()), func(i int64, _ string) (goja.Value, *encErr) {
			return la.Get(int(i)), nil
		})
	} else if lo.own != nil {
		s := lo.own
		err = e.members(s.keys, func(i int, _ string) (goja.Value, *encErr) {
			return s.vals[i], nil
		})
	} else {
		err = e.members(lo.ordered(), func(_ int, k string) (goja.Value, *encErr) {
			return lo.Get(k), nil
		})
	}
	e.stack = e.stack[:len(e.stack)-1]
	return err == nil, err
}

// rawOK reports whether, in modeStringify, JSON.stringify would give a
// clean lazy value's original bytes: no toJSON on the prototypes its
// wrappers were created with, and no wrapper in it re-parented.
func (e *encoder) rawOK(b *lazyBase) bool {
	if !e.protoChecked {
		e.protoChecked = true
		e.protoOK = e.noToJSON(e.r.g.lazyObjProto) && e.noToJSON(e.r.g.lazyArrProto)
	}
	return e.protoOK && b.protosIntact()
}

func (e *encoder) noToJSON(p *goja.Object) bool {
	if p == nil {
		return true
	}
	v, ok := e.r.lookup(p, "toJSON")
	return ok && goja.IsUndefined(v)
}

// own reads the own data property key of o (a non-proxy object) without
// running guest code: an accessor is an error, a missing property undefined.
func (e *encoder) own(o *goja.Object, key goja.Value, name string) (goja.Value, *encErr) {
	v, kind := e.r.ownData(o, key)
	switch kind {
	case propAccessor:
		e.path = append(e.path, name)
		err := e.fail(errDynamic, "a getter/setter property cannot be converted (it would run code)")
		e.path = e.path[:len(e.path)-1]
		return nil, err
	case propMissing:
		return goja.Undefined(), nil
	}
	return v, nil
}

type propKind int

const (
	propMissing propKind = iota
	propData
	propAccessor
)

// ownData reads the own property key of o (not a proxy) through the
// captured Object.getOwnPropertyDescriptor, which runs no guest code for an
// ordinary object, and reads only the fresh descriptor's own data
// properties.
func (r *run) ownData(o *goja.Object, key goja.Value) (goja.Value, propKind) {
	d, err := r.g.gopd(goja.Undefined(), o, key)
	if err != nil {
		return nil, propAccessor
	}
	dobj, ok := d.(*goja.Object)
	if !ok {
		return nil, propMissing
	}
	// The descriptor is fresh and ours: cut it from Object.prototype (where
	// the guest may have put a getter named "get" or "value") so that
	// reading a property it lacks finds nothing. An accessor descriptor has
	// "get", a data descriptor "value".
	_ = dobj.SetPrototype(nil)
	if dobj.Get("get") != nil {
		return nil, propAccessor
	}
	return dobj.Get("value"), propData
}

// lookup finds key along o's prototype chain without running guest code.
// ok is false when that is impossible (a proxy or an accessor on the way);
// a missing property is (undefined, true).
func (r *run) lookup(o *goja.Object, key string) (goja.Value, bool) {
	kv := r.rt.ToValue(key)
	for depth := 0; o != nil && depth < 1000; depth++ {
		if o.ExportType() == proxyType {
			return nil, false
		}
		v, kind := r.ownData(o, kv)
		switch kind {
		case propData:
			return v, true
		case propAccessor:
			return nil, false
		}
		o = o.Prototype()
	}
	return goja.Undefined(), true
}

// string writes a goja string as JSON.stringify does: surrogate pairs as
// UTF-8, lone surrogates as \udxxx escapes.
func (e *encoder) string(s goja.String) *encErr {
	if len(e.buf)+s.Length() > e.max {
		return e.fail(errSize, fmt.Sprintf("over %d bytes", e.max))
	}
	if gs := s.String(); isASCII(gs) {
		e.buf = appendQuoted(e.buf, gs)
		return e.checkSize()
	}
	n := s.Length()
	e.buf = append(e.buf, '"')
	for i := 0; i < n; i++ {
		c := s.CharAt(i)
		switch {
		case c < utf8.RuneSelf:
			e.buf = appendEscapedByte(e.buf, byte(c))
		case utf16.IsSurrogate(rune(c)):
			if c < 0xDC00 && i+1 < n {
				if c2 := s.CharAt(i + 1); c2 >= 0xDC00 && c2 <= 0xDFFF {
					e.buf = utf8.AppendRune(e.buf, utf16.DecodeRune(rune(c), rune(c2)))
					i++
					continue
				}
			}
			e.buf = append(e.buf, '\\', 'u', hex[c>>12], hex[(c>>8)&0xF], hex[(c>>4)&0xF], hex[c&0xF])
		default:
			e.buf = utf8.AppendRune(e.buf, rune(c))
		}
	}
	e.buf = append(e.buf, '"')
	return e.checkSize()
}

const hex = "0123456789abcdef"

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// appendQuoted writes a valid UTF-8 Go string as a JSON string, escaping as
// JSON.stringify does.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		b = appendEscapedByte(b, c)
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendEscapedByte(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\t':
		return append(b, '\\', 't')
	case '\n':
		return append(b, '\\', 'n')
	case '\f':
		return append(b, '\\', 'f')
	case '\r':
		return append(b, '\\', 'r')
	}
	if c < 0x20 {
		return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
	}
	return append(b, c)
}

// appendNumber formats f as JSON.stringify does (Number::toString, with
// NaN and the infinities as null and -0 as 0).
func appendNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0')
	}
	abs := math.Abs(f)
	fmtc := byte('f')
	if abs < 1e-6 || abs >= 1e21 {
		fmtc = 'e'
	}
	b = strconv.AppendFloat(b, f, fmtc, -1, 64)
	if fmtc == 'e' {
		// Go writes e-07 and e+07; JavaScript writes e-7 and e+7.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
