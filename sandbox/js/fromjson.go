package js

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/sandcall/sandcall/sandbox"
)

// maxBuildDepth bounds the nesting of JSON coming from the host.
const maxBuildDepth = 512

// buildValue builds a fresh guest value from compact JSON in one pass,
// without the guest's JSON.parse and without intermediate Go maps. The bytes
// are copied into one Go string once; strings without escapes are
// zero-copy substrings of it. Properties are defined (never set), so setters
// the guest put on Object.prototype do not run; key order is preserved.
// Integral numbers become integer values.
func buildValue(rt *goja.Runtime, data []byte) (goja.Value, *sandbox.Error) {
	b := builder{rt: rt, s: string(data)}
	b.ws()
	v := b.value(0)
	if b.err == "" {
		b.ws()
		if b.i != len(b.s) {
			b.fail("unexpected data after the value")
		}
	}
	if b.err != "" {
		return nil, sandbox.Errorf(sandbox.EToolFailed, "", "the tool returned invalid JSON: "+b.err)
	}
	return v, nil
}

type builder struct {
	rt  *goja.Runtime
	s   string
	i   int
	err string
	// items is a reusable stack of array elements.
	items []any
}

func (b *builder) fail(msg string) {
	if b.err == "" {
		b.err = fmt.Sprintf("%s at offset %d", msg, b.i)
	}
}

func (b *builder) ws() {
	for b.i < len(b.s) {
		switch b.s[b.i] {
		case ' ', '\t', '\n', '\r':
			b.i++
		default:
			return
		}
	}
}

func (b *builder) value(depth int) goja.Value {
	if b.i >= len(b.s) {
		b.fail("unexpected end")
		return nil
	}
	switch c := b.s[b.i]; c {
	case '{':
		if depth >= maxBuildDepth {
			b.fail(fmt.Sprintf("nested deeper than %d levels", maxBuildDepth))
			return nil
		}
		return b.object(depth + 1)
	case '[':
		if depth >= maxBuildDepth {
			b.fail(fmt.Sprintf("nested deeper than %d levels", maxBuildDepth))
			return nil
		}
		return b.array(depth + 1)
	case '"':
		return b.string()
	case 't':
		return b.literal("true", b.rt.ToValue(true))
	case 'f':
		return b.literal("false", b.rt.ToValue(false))
	case 'n':
		return b.literal("null", goja.Null())
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return b.number()
		}
		b.fail(fmt.Sprintf("unexpected character %q", c))
		return nil
	}
}

func (b *builder) literal(word string, v goja.Value) goja.Value {
	if len(b.s)-b.i < len(word) || b.s[b.i:b.i+len(word)] != word {
		b.fail("invalid literal")
		return nil
	}
	b.i += len(word)
	return v
}

func (b *builder) object(depth int) goja.Value {
	o := b.rt.NewObject()
	b.i++ // {
	b.ws()
	if b.i < len(b.s) && b.s[b.i] == '}' {
		b.i++
		return o
	}
	for {
		b.ws()
		if b.i >= len(b.s) || b.s[b.i] != '"' {
			b.fail("expected a string key")
			return nil
		}
		key, ok := b.rawString()
		if !ok {
			return nil
		}
		b.ws()
		if b.i >= len(b.s) || b.s[b.i] != ':' {
			b.fail("expected ':'")
			return nil
		}
		b.i++
		b.ws()
		v := b.value(depth)
		if v == nil {
			return nil
		}
		_ = o.DefineDataProperty(key, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		b.ws()
		if b.i >= len(b.s) {
			b.fail("unexpected end in object")
			return nil
		}
		switch b.s[b.i] {
		case ',':
			b.i++
		case '}':
			b.i++
			return o
		default:
			b.fail("expected ',' or '}'")
			return nil
		}
	}
}

func (b *builder) array(depth int) goja.Value {
	b.i++ // [
	b.ws()
	if b.i < len(b.s) && b.s[b.i] == ']' {
		b.i++
		return b.rt.NewArray()
	}
	base := len(b.items)
	for {
		b.ws()
		v := b.value(depth)
		if v == nil {
			b.items = b.items[:base]
			return nil
		}
		b.items = append(b.items, v)
		b.ws()
		if b.i >= len(b.s) {
			b.fail("unexpected end in array")
			b.items = b.items[:base]
			return nil
		}
		switch b.s[b.i] {
		case ',':
			b.i++
		case ']':
			b.i++
			a := b.rt.NewArray(b.items[base:]...)
			clear(b.items[base:])
			b.items = b.items[:base]
			return a
		default:
			b.fail("expected ',' or ']'")
			b.items = b.items[:base]
			return nil
		}
	}
}

func (b *builder) string() goja.Value {
	start := b.i + 1
	for j := start; j < len(b.s); j++ {
		c := b.s[j]
		if c == '"' {
			b.i = j + 1
			return b.rt.ToValue(b.s[start:j])
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	u, ok := b.decodeString()
	if !ok {
		return nil
	}
	return u
}

// rawString reads a string as a Go string (for keys). Lone surrogates in
// keys are replaced by U+FFFD.
func (b *builder) rawString() (string, bool) {
	start := b.i + 1
	for j := start; j < len(b.s); j++ {
		c := b.s[j]
		if c == '"' {
			b.i = j + 1
			return b.s[start:j], true
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	v, ok := b.decodeString()
	if !ok {
		return "", false
	}
	return v.String(), true
}

// decodeString decodes a string with escapes into UTF-16, keeping lone
// surrogates as JSON.parse does.
func (b *builder) decodeString() (goja.Value, bool) {
	j := b.i + 1
	var u []uint16
	for {
		if j >= len(b.s) {
			b.fail("unterminated string")
			return nil, false
		}
		c := b.s[j]
		switch {
		case c == '"':
			b.i = j + 1
			return goja.StringFromUTF16(u), true
		case c < 0x20:
			b.i = j
			b.fail("control character in string")
			return nil, false
		case c == '\\':
			if j+1 >= len(b.s) {
				b.fail("unterminated escape")
				return nil, false
			}
			j++
			switch b.s[j] {
			case '"', '\\', '/':
				u = append(u, uint16(b.s[j]))
			case 'b':
				u = append(u, '\b')
			case 'f':
				u = append(u, '\f')
			case 'n':
				u = append(u, '\n')
			case 'r':
				u = append(u, '\r')
			case 't':
				u = append(u, '\t')
			case 'u':
				if j+4 >= len(b.s) {
					b.fail("short \\u escape")
					return nil, false
				}
				n, err := strconv.ParseUint(b.s[j+1:j+5], 16, 16)
				if err != nil {
					b.i = j
					b.fail("invalid \\u escape")
					return nil, false
				}
				u = append(u, uint16(n))
				j += 4
			default:
				b.i = j
				b.fail("invalid escape")
				return nil, false
			}
			j++
		case c < utf8.RuneSelf:
			u = append(u, uint16(c))
			j++
		default:
			r, size := utf8.DecodeRuneInString(b.s[j:])
			u = utf16.AppendRune(u, r)
			j += size
		}
	}
}

func (b *builder) number() goja.Value {
	start := b.i
	j := b.i
	if j < len(b.s) && b.s[j] == '-' {
		j++
	}
	digits := j
	for j < len(b.s) && b.s[j] >= '0' && b.s[j] <= '9' {
		j++
	}
	if j == digits || (b.s[digits] == '0' && j-digits > 1) {
		b.fail("invalid number")
		return nil
	}
	integral := true
	if j < len(b.s) && b.s[j] == '.' {
		integral = false
		j++
		k := j
		for j < len(b.s) && b.s[j] >= '0' && b.s[j] <= '9' {
			j++
		}
		if j == k {
			b.fail("invalid number")
			return nil
		}
	}
	if j < len(b.s) && (b.s[j] == 'e' || b.s[j] == 'E') {
		integral = false
		j++
		if j < len(b.s) && (b.s[j] == '+' || b.s[j] == '-') {
			j++
		}
		k := j
		for j < len(b.s) && b.s[j] >= '0' && b.s[j] <= '9' {
			j++
		}
		if j == k {
			b.fail("invalid number")
			return nil
		}
	}
	b.i = j
	lit := b.s[start:j]
	if integral && len(lit) < 16 && lit != "-0" {
		n, _ := strconv.ParseInt(lit, 10, 64)
		return b.rt.ToValue(n)
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		b.fail("invalid number")
		return nil
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 && !(f == 0 && math.Signbit(f)) {
		return b.rt.ToValue(int64(f))
	}
	return b.rt.ToValue(f)
}
