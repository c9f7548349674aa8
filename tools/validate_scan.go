package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Stage 2, scan: the JSON lexer the walker drives over the raw argument
// bytes (whitespace, strings, numbers, skipping values), allocation-free.

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(data []byte, pos int) int {
	for pos < len(data) && isWS(data[pos]) {
		pos++
	}
	return pos
}

func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isWS(b[i]) {
		i++
	}
	for j > i && isWS(b[j-1]) {
		j--
	}
	return b[i:j]
}

// kindAt returns the JSON type of the value starting at pos (assumed valid).
func (st *vstate) kindAt(pos int) jsonType {
	switch c := st.data[pos]; {
	case c == '{':
		return tObject
	case c == '[':
		return tArray
	case c == '"':
		return tString
	case c == 't' || c == 'f':
		return tBool
	case c == 'n':
		return tNull
	default:
		return tNumber
	}
}

// literal scans true, false or null.
func (st *vstate) literal(pos int) int {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(st.data)-pos >= len(lit) && string(st.data[pos:pos+len(lit)]) == lit {
			return pos + len(lit)
		}
	}
	return st.syntax(pos, "invalid literal")
}

// scanString scans the string starting at data[pos] == '"'. It returns the
// end (after the closing quote) and whether it holds escapes; -1 on error.
func (st *vstate) scanString(pos int) (int, bool) {
	end, esc, at, msg := scanStringAt(st.data, pos)
	if end < 0 {
		return st.syntax(at, msg), false
	}
	return end, esc
}

// scanStringAt scans the JSON string at data[pos] == '"': its end and
// whether it has escapes, or -1 and where and what the error is.
func scanStringAt(data []byte, pos int) (end int, esc bool, at int, msg string) {
	i := pos + 1
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			return i + 1, esc, 0, ""
		case c == '\\':
			esc = true
			if i+1 >= len(data) {
				return -1, false, i, "unexpected end of input in string"
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					return -1, false, i, "invalid \\u escape"
				}
				for _, h := range data[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1, false, i, "invalid \\u escape"
					}
				}
				i += 6
			default:
				return -1, false, i, "invalid escape in string"
			}
		case c < 0x20:
			return -1, false, i, "control character in string"
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return -1, false, i, "invalid UTF-8 in string"
			}
			i += size
		}
	}
	return -1, false, pos, "unterminated string"
}

// unquote returns the content of the string data[start:end] (quotes included).
func (st *vstate) unquote(start, end int, esc bool) string {
	if !esc {
		return string(st.data[start+1 : end-1])
	}
	var s string
	if err := json.Unmarshal(st.data[start:end], &s); err != nil {
		return string(st.data[start+1 : end-1])
	}
	return s
}

// scanNumber scans a JSON number. It returns the end, and whether the text
// has a fraction or exponent; -1 on error.
func (st *vstate) scanNumber(pos int) (int, bool) {
	end, frac, at, msg := scanNumberAt(st.data, pos)
	if end < 0 {
		return st.syntax(at, msg), false
	}
	return end, frac
}

// scanNumberAt scans the JSON number at data[pos]: its end and whether it
// has a fraction or exponent, or -1 and where and what the error is.
func scanNumberAt(data []byte, pos int) (end int, frac bool, at int, msg string) {
	i := pos
	if i < len(data) && data[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(data) && data[i] == '0' {
		i++
	} else if digits() == 0 {
		return -1, false, i, "invalid number"
	}
	if i < len(data) && data[i] == '.' {
		i++
		frac = true
		if digits() == 0 {
			return -1, false, i, "invalid number"
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		frac = true
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return -1, false, i, "invalid number"
		}
	}
	return i, frac, 0, ""
}

// parseNumber parses a (syntactically valid) JSON number and reports
// whether it is integral. ok is false if it is out of float64 range.
func parseNumber(b []byte) (f float64, integral, ok bool) {
	simple := len(b) <= 16
	for _, c := range b {
		if c == '.' || c == 'e' || c == 'E' {
			simple = false
			break
		}
	}
	if simple {
		neg := b[0] == '-'
		if neg {
			b = b[1:]
		}
		var u uint64
		for _, c := range b {
			u = u*10 + uint64(c-'0')
		}
		f = float64(u)
		if neg {
			f = -f
		}
		return f, true, true
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return f, false, false
	}
	return f, f == math.Trunc(f), true
}

// skip scans one value of any shape; -1 on a syntax error.
func (st *vstate) skip(pos int) int {
	data := st.data
	pos = skipWS(data, pos)
	if pos >= len(data) {
		return st.syntax(pos, "unexpected end of input")
	}
	switch c := data[pos]; {
	case c == '"':
		end, _ := st.scanString(pos)
		return end
	case c == '-' || (c >= '0' && c <= '9'):
		end, _ := st.scanNumber(pos)
		return end
	case c == 't' || c == 'f' || c == 'n':
		return st.literal(pos)
	case c == '{' || c == '[':
		if st.nest >= maxNesting {
			return st.syntax(pos, fmt.Sprintf("arguments nest more than %d levels", maxNesting))
		}
		st.nest++
		end := st.skipContainer(pos, c)
		st.nest--
		return end
	default:
		return st.syntax(pos, fmt.Sprintf("invalid character %q", c))
	}
}

// skipContainer scans the object or array at data[pos] == c.
func (st *vstate) skipContainer(pos int, c byte) int {
	data := st.data
	{
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i := skipWS(data, pos+1)
		if i < len(data) && data[i] == closer {
			return i + 1
		}
		for {
			if c == '{' {
				i = skipWS(data, i)
				if i >= len(data) || data[i] != '"' {
					return st.syntax(i, "expected a property name")
				}
				if i, _ = st.scanString(i); i < 0 {
					return -1
				}
				i = skipWS(data, i)
				if i >= len(data) || data[i] != ':' {
					return st.syntax(i, "expected ':' after a property name")
				}
				i++
			}
			if i = st.skip(i); i < 0 {
				return -1
			}
			i = skipWS(data, i)
			if i < len(data) && data[i] == ',' {
				i++
				continue
			}
			if i < len(data) && data[i] == closer {
				return i + 1
			}
			return st.syntax(i, "expected ',' or '"+string(closer)+"'")
		}
	}
}

func (st *vstate) isIntegral(pos int) bool {
	end, frac := st.scanNumber(pos)
	return end >= 0 && !frac
}
