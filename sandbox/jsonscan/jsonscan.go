// Package jsonscan reads JSON text in place: it finds where a value, a
// string or a number ends, walks the members of an object or the items of
// an array, and measures nesting, without decoding and without allocating.
// It is the one JSON scanner of the module: the argument validator and the
// struct decoder of package tools, the row cutter of package bindings, the
// config editor of tools/upstream and the engines' depth guards all read
// JSON through it. (package policy, a leaf that imports nothing of the
// module, keeps its own small parser.)
//
// Two kinds of functions:
//
//   - Validating ones (String, Number, Literal, Value) check the text as
//     encoding/json would, and say where and why it is not JSON: they
//     return an end of -1, the offset of the fault and a message.
//   - Fast ones (Skip, Items, Members, Depth) trust that the text is valid
//     JSON (checked before, by json.Valid or Value) and only look for the
//     structure: they never fail and never read past the slice, whatever
//     they are given, but on invalid text their answer means nothing.
//
// Offsets are byte offsets into the slice; an end is the offset just past
// the value.
package jsonscan

import (
	"fmt"
	"unicode/utf8"
)

// IsSpace reports whether c is JSON white space (space, tab, newline,
// carriage return; not \v or \f, which bytes.TrimSpace also trims).
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Space returns the offset of the first byte at or after i that is not
// JSON white space (len(b) if there is none).
func Space(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// Trim returns b without leading and trailing JSON white space.
func Trim(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && IsSpace(b[i]) {
		i++
	}
	for j > i && IsSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// The messages of the validating functions.
const (
	MsgEOF        = "unexpected end of input"
	MsgLiteral    = "invalid literal"
	MsgNumber     = "invalid number"
	MsgKey        = "expected a property name"
	MsgColon      = "expected ':' after a property name"
	MsgUnterm     = "unterminated string"
	MsgEscape     = "invalid escape in string"
	MsgUEscape    = "invalid \\u escape"
	MsgStringEOF  = "unexpected end of input in string"
	MsgControl    = "control character in string"
	MsgUTF8       = "invalid UTF-8 in string"
	MsgTooDeep    = "nested too deeply"
	msgCommaClose = "expected ',' or '"
)

// String scans the JSON string whose opening quote is b[i]: its end and
// whether it holds escapes (so that its text is not simply
// b[i+1:end-1]); or -1, the offset of the fault and what it is.
func String(b []byte, i int) (end int, esc bool, at int, msg string) {
	pos := i
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, esc, 0, ""
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return -1, false, i, MsgStringEOF
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return -1, false, i, MsgUEscape
				}
				for _, h := range b[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1, false, i, MsgUEscape
					}
				}
				i += 6
			default:
				return -1, false, i, MsgEscape
			}
		case c < 0x20:
			return -1, false, i, MsgControl
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return -1, false, i, MsgUTF8
			}
			i += size
		}
	}
	return -1, false, pos, MsgUnterm
}

// Number scans the JSON number that starts at b[i]: its end and whether
// it has a fraction or an exponent; or -1, the offset of the fault and
// what it is.
func Number(b []byte, i int) (end int, frac bool, at int, msg string) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return -1, false, i, MsgNumber
	}
	if i < len(b) && b[i] == '.' {
		i++
		frac = true
		if digits() == 0 {
			return -1, false, i, MsgNumber
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		frac = true
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return -1, false, i, MsgNumber
		}
	}
	return i, frac, 0, ""
}

// Literal returns the end of the true, false or null at b[i], or -1.
func Literal(b []byte, i int) int {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
			return i + len(lit)
		}
	}
	return -1
}

// Value scans, after any white space at b[i], one JSON value of any shape
// nesting at most maxDepth levels of objects and arrays: its end; or -1,
// the offset of the fault and what it is (MsgTooDeep at the container
// that goes past maxDepth). Together with a check that only white space
// follows, it accepts what json.Valid accepts (within maxDepth), except
// invalid UTF-8 in strings, which json.Valid lets through and Value does
// not.
func Value(b []byte, i, maxDepth int) (end, at int, msg string) {
	i = Space(b, i)
	if i >= len(b) {
		return -1, i, MsgEOF
	}
	switch c := b[i]; {
	case c == '"':
		end, _, at, msg = String(b, i)
		return end, at, msg
	case c == '-' || (c >= '0' && c <= '9'):
		end, _, at, msg = Number(b, i)
		return end, at, msg
	case c == 't' || c == 'f' || c == 'n':
		if end = Literal(b, i); end < 0 {
			return -1, i, MsgLiteral
		}
		return end, 0, ""
	case c == '{' || c == '[':
		if maxDepth <= 0 {
			return -1, i, MsgTooDeep
		}
		return container(b, i, maxDepth-1)
	default:
		return -1, i, fmt.Sprintf("invalid character %q", c)
	}
}

// container is Value for the object or array at b[i].
func container(b []byte, i, maxDepth int) (end, at int, msg string) {
	closer := byte('}')
	if b[i] == '[' {
		closer = ']'
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, 0, ""
	}
	for {
		if closer == '}' {
			i = Space(b, i)
			if i >= len(b) || b[i] != '"' {
				return -1, i, MsgKey
			}
			if i, _, at, msg = String(b, i); i < 0 {
				return -1, at, msg
			}
			i = Space(b, i)
			if i >= len(b) || b[i] != ':' {
				return -1, i, MsgColon
			}
			i++
		}
		if i, at, msg = Value(b, i, maxDepth); i < 0 {
			return -1, at, msg
		}
		i = Space(b, i)
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i < len(b) && b[i] == closer {
			return i + 1, 0, ""
		}
		return -1, i, msgCommaClose + string(closer) + "'"
	}
}

// Skip returns the end of the value that starts at b[i] in valid JSON
// (without white space before it). It does not recurse, so any depth is
// fine. On invalid text it returns some offset from i to len(b).
func Skip(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the end of the string whose opening quote is b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// Depth returns the deepest nesting of objects and arrays in JSON text
// (0 for a scalar). Brackets inside strings do not count.
func Depth[T string | []byte](s T) int {
	depth, deepest := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		}
	}
	return deepest
}
