package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/sandcall/sandcall/sandbox/jsonscan"
)

// Stage 2, scan: the JSON lexer the walker drives over the raw argument
// bytes (whitespace, strings, numbers, skipping values), allocation-free:
// package jsonscan, with errors recorded at the walker's path.

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
	if end := jsonscan.Literal(st.data, pos); end >= 0 {
		return end
	}
	return st.syntax(pos, jsonscan.MsgLiteral)
}

// scanString scans the string starting at data[pos] == '"'. It returns the
// end (after the closing quote) and whether it holds escapes; -1 on error.
func (st *vstate) scanString(pos int) (int, bool) {
	end, esc, at, msg := jsonscan.String(st.data, pos)
	if end < 0 {
		return st.syntax(at, msg), false
	}
	return end, esc
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
	end, frac, at, msg := jsonscan.Number(st.data, pos)
	if end < 0 {
		return st.syntax(at, msg), false
	}
	return end, frac
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

// skip scans one value of any shape (white space before it skipped),
// within what is left of maxNesting; -1 on a syntax error.
func (st *vstate) skip(pos int) int {
	end, at, msg := jsonscan.Value(st.data, pos, maxNesting-st.nest)
	if end < 0 {
		if msg == jsonscan.MsgTooDeep {
			msg = fmt.Sprintf("arguments nest more than %d levels", maxNesting)
		}
		return st.syntax(at, msg)
	}
	return end
}

func (st *vstate) isIntegral(pos int) bool {
	end, frac := st.scanNumber(pos)
	return end >= 0 && !frac
}
