package tools

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/sandcall/sandcall/sandbox/jsonscan"
)

// A fast decoder for the common case of a tool's arguments: a flat struct of
// strings, booleans and numbers. json.Unmarshal costs about a microsecond
// for {"n":5}, several times the rest of a call; this one walks the
// (already validated) bytes once and stores each field through its offset.
// Anything it does not handle exactly as json.Unmarshal would (a nested
// value, an unknown key, a number out of range) makes it give up, and the
// caller falls back to json.Unmarshal, which also produces the error.

// flatPlan decodes JSON objects into one flat struct type.
type flatPlan struct {
	fields []flatField
}

type flatField struct {
	name string
	off  uintptr
	kind reflect.Kind
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// planFor returns a plan for struct type t, or nil if t is not flat.
func planFor(t reflect.Type) *flatPlan {
	if t.Kind() != reflect.Struct || customDecoding(t) {
		return nil
	}
	p := &flatPlan{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, ok := jsonFieldName(f)
		if !ok {
			continue
		}
		if tagHas(tag, "string") || customDecoding(f.Type) {
			return nil
		}
		switch k := f.Type.Kind(); k {
		case reflect.String, reflect.Bool,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			p.fields = append(p.fields, flatField{name: name, off: f.Offset, kind: k})
		default:
			return nil
		}
	}
	// Two fields with the same JSON name: let encoding/json apply its rules.
	for i := range p.fields {
		for j := i + 1; j < len(p.fields); j++ {
			if p.fields[i].name == p.fields[j].name {
				return nil
			}
		}
	}
	return p
}

func customDecoding(t reflect.Type) bool {
	return t.Implements(jsonUnmarshalerType) || t.Implements(textUnmarshalerType) ||
		reflect.PointerTo(t).Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)
}

func tagHas(tag, opt string) bool {
	for i := 0; i < len(tag); {
		j := i
		for j < len(tag) && tag[j] != ',' {
			j++
		}
		if i > 0 && tag[i:j] == opt {
			return true
		}
		i = j + 1
	}
	return false
}

// decode stores the object in data into the struct at dst. It reports false
// if it cannot decode data exactly as json.Unmarshal would; dst may then be
// partly written, and the caller must start again from a zero value.
func (p *flatPlan) decode(data []byte, dst unsafe.Pointer) bool {
	i := jsonscan.Space(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = jsonscan.Space(data, i+1)
	if i < len(data) && data[i] == '}' {
		return jsonscan.Space(data, i+1) == len(data)
	}
	for {
		i = jsonscan.Space(data, i)
		if i >= len(data) || data[i] != '"' {
			return false
		}
		ke, esc, _, _ := jsonscan.String(data, i)
		if ke < 0 || esc {
			return false
		}
		key := data[i+1 : ke-1]
		i = jsonscan.Space(data, ke)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = jsonscan.Space(data, i+1)
		var f *flatField
		for j := range p.fields {
			if p.fields[j].name == string(key) {
				f = &p.fields[j]
				break
			}
		}
		if f == nil || i >= len(data) {
			return false // unknown (or differently cased) key: let encoding/json decide
		}
		end := decodeField(data, f, i, unsafe.Add(dst, f.off))
		if end < 0 {
			return false
		}
		i = jsonscan.Space(data, end)
		if i < len(data) && data[i] == ',' {
			i++
			continue
		}
		if i < len(data) && data[i] == '}' {
			return jsonscan.Space(data, i+1) == len(data)
		}
		return false
	}
}

// decodeField decodes the value at data[pos] into the field at ptr; -1 if
// it cannot.
func decodeField(data []byte, f *flatField, pos int, ptr unsafe.Pointer) int {
	c := data[pos]
	if c == 'n' {
		if len(data)-pos >= 4 && string(data[pos:pos+4]) == "null" {
			return pos + 4 // null leaves the field alone, as encoding/json does
		}
		return -1
	}
	switch f.kind {
	case reflect.String:
		if c != '"' {
			return -1
		}
		end, esc, _, _ := jsonscan.String(data, pos)
		if end < 0 {
			return -1
		}
		var s string
		if esc {
			if json.Unmarshal(data[pos:end], &s) != nil {
				return -1
			}
		} else {
			s = string(data[pos+1 : end-1])
		}
		*(*string)(ptr) = s
		return end
	case reflect.Bool:
		switch {
		case len(data)-pos >= 4 && string(data[pos:pos+4]) == "true":
			*(*bool)(ptr) = true
			return pos + 4
		case len(data)-pos >= 5 && string(data[pos:pos+5]) == "false":
			*(*bool)(ptr) = false
			return pos + 5
		}
		return -1
	}
	if c != '-' && (c < '0' || c > '9') {
		return -1
	}
	end, frac, _, _ := jsonscan.Number(data, pos)
	if end < 0 {
		return -1
	}
	text := data[pos:end]
	switch f.kind {
	case reflect.Float64:
		x, err := strconv.ParseFloat(string(text), 64)
		if err != nil {
			return -1
		}
		*(*float64)(ptr) = x
		return end
	case reflect.Float32:
		x, err := strconv.ParseFloat(string(text), 32)
		if err != nil {
			return -1
		}
		*(*float32)(ptr) = float32(x)
		return end
	}
	if frac {
		return -1 // encoding/json rejects 1.0 for an integer field: so do we, through it
	}
	switch f.kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := parseInt(text, intBits(f.kind))
		if err != nil {
			return -1
		}
		switch f.kind {
		case reflect.Int:
			*(*int)(ptr) = int(n)
		case reflect.Int8:
			*(*int8)(ptr) = int8(n)
		case reflect.Int16:
			*(*int16)(ptr) = int16(n)
		case reflect.Int32:
			*(*int32)(ptr) = int32(n)
		case reflect.Int64:
			*(*int64)(ptr) = n
		}
		return end
	default: // unsigned
		if text[0] == '-' {
			return -1
		}
		n, err := strconv.ParseUint(string(text), 10, intBits(f.kind))
		if err != nil {
			return -1
		}
		switch f.kind {
		case reflect.Uint:
			*(*uint)(ptr) = uint(n)
		case reflect.Uint8:
			*(*uint8)(ptr) = uint8(n)
		case reflect.Uint16:
			*(*uint16)(ptr) = uint16(n)
		case reflect.Uint32:
			*(*uint32)(ptr) = uint32(n)
		case reflect.Uint64:
			*(*uint64)(ptr) = n
		}
		return end
	}
}

var errRange = strconv.ErrRange

// intBits is the size of an integer kind.
func intBits(k reflect.Kind) int {
	switch k {
	case reflect.Int8, reflect.Uint8:
		return 8
	case reflect.Int16, reflect.Uint16:
		return 16
	case reflect.Int32, reflect.Uint32:
		return 32
	case reflect.Int64, reflect.Uint64:
		return 64
	}
	return strconv.IntSize
}

// parseInt parses a decimal integer of at most bits bits; short ones without
// strconv's overhead.
func parseInt(b []byte, bits int) (int64, error) {
	if len(b) > 0 && len(b) <= 10 {
		neg := b[0] == '-'
		d := b
		if neg {
			d = b[1:]
		}
		var n int64
		for _, c := range d {
			n = n*10 + int64(c-'0')
		}
		if neg {
			n = -n
		}
		if bits < 64 && (n < -(1<<(bits-1)) || n > 1<<(bits-1)-1) {
			return 0, errRange
		}
		return n, nil
	}
	n, err := strconv.ParseInt(string(b), 10, bits)
	if err != nil {
		return 0, err
	}
	if n == math.MinInt64 && bits < 64 {
		return 0, errRange
	}
	return n, nil
}
