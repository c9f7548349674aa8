package policy

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// parseArgs converts JSON text to plain data — map[string]any, []any,
// string, float64, bool, nil — failing past maxDepth nesting. It is the
// policy's own small parser: one pass, no reflection, and the depth cap is
// enforced while parsing rather than by the caller's stack.
//
// If keys is not nil, a top-level object keeps only those members; the
// others are validated and skipped without allocating.
func parseArgs(b []byte, maxDepth int, keys map[string]bool) (any, error) {
	p := argParser{b: b, maxDepth: maxDepth, keys: keys}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.b) {
		return nil, errSyntax
	}
	return v, nil
}

var (
	errSyntax = errors.New("invalid JSON")
	errDepth  = errors.New("nested too deeply")
)

type argParser struct {
	b        []byte
	i        int
	maxDepth int
	keys     map[string]bool
}

func (p *argParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// next passes over what follows a member or an item: a comma (more is
// true) or the closer of its object or array (more is false); anything
// else is errSyntax.
func (p *argParser) next(closer byte) (more bool, err error) {
	p.space()
	switch {
	case p.i >= len(p.b):
		return false, errSyntax
	case p.b[p.i] == ',':
		p.i++
		return true, nil
	case p.b[p.i] == closer:
		p.i++
		return false, nil
	}
	return false, errSyntax
}

func (p *argParser) value(depth int) (any, error) {
	if p.i >= len(p.b) {
		return nil, errSyntax
	}
	switch c := p.b[p.i]; {
	case c == '{':
		if depth+1 > p.maxDepth {
			return nil, errDepth
		}
		p.i++
		m := make(map[string]any, len(p.keys)*(1-min(depth, 1)))
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return m, nil
		}
		for {
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return nil, errSyntax
			}
			var k string
			want := true
			if raw, ok := p.simpleStr(); ok {
				if depth == 0 && p.keys != nil {
					want = p.keys[string(raw)] // no allocation for the lookup
				}
				if want {
					k = string(raw)
				}
			} else {
				var err error
				if k, err = p.str(); err != nil {
					return nil, err
				}
				want = depth > 0 || p.keys == nil || p.keys[k]
			}
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return nil, errSyntax
			}
			p.i++
			p.space()
			if !want {
				if err := p.skip(depth + 1); err != nil {
					return nil, err
				}
			} else {
				v, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				m[k] = v
			}
			if more, err := p.next('}'); !more {
				if err != nil {
					return nil, err
				}
				return m, nil
			}
		}
	case c == '[':
		if depth+1 > p.maxDepth {
			return nil, errDepth
		}
		p.i++
		a := []any{}
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return a, nil
		}
		for {
			p.space()
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			if more, err := p.next(']'); !more {
				if err != nil {
					return nil, err
				}
				return a, nil
			}
		}
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.lit("true")
	case c == 'f':
		return false, p.lit("false")
	case c == 'n':
		return nil, p.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.num()
	}
	return nil, errSyntax
}

func (p *argParser) lit(s string) error {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return errSyntax
	}
	p.i += len(s)
	return nil
}

// simpleStr passes over a string at p.i without escapes or non-ASCII bytes
// and returns its bytes; otherwise it leaves p.i alone and reports false.
func (p *argParser) simpleStr() ([]byte, bool) {
	for j := p.i + 1; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			raw := p.b[p.i+1 : j]
			p.i = j + 1
			return raw, true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// str parses a string at p.i (an opening quote). Strings without escapes
// or non-ASCII bytes are sliced; others go through encoding/json, which
// knows every escape and replaces invalid UTF-8 as the broker's decoder does.
func (p *argParser) str() (string, error) {
	start := p.i
	p.i++
	simple := true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if simple {
				return string(p.b[start+1 : p.i-1]), nil
			}
			var s string
			if err := json.Unmarshal(p.b[start:p.i], &s); err != nil {
				return "", errSyntax
			}
			return s, nil
		case c == '\\':
			simple = false
			p.i += 2
			continue
		case c < 0x20:
			return "", errSyntax
		case c >= utf8.RuneSelf:
			simple = false
		}
		p.i++
	}
	return "", errSyntax
}

func (p *argParser) num() (any, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if n := digits(); n == 0 || (n > 1 && p.b[intStart] == '0') {
		return nil, errSyntax
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, errSyntax
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, errSyntax
		}
	}
	f, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	if err != nil {
		return nil, errSyntax // out of range
	}
	return f, nil
}

// skip checks and passes over one value, as value would parse it.
func (p *argParser) skip(depth int) error {
	if p.i >= len(p.b) {
		return errSyntax
	}
	switch c := p.b[p.i]; {
	case c == '{' || c == '[':
		if depth+1 > p.maxDepth {
			return errDepth
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.i++
		p.space()
		if p.i < len(p.b) && p.b[p.i] == end {
			p.i++
			return nil
		}
		for {
			p.space()
			if c == '{' {
				if p.i >= len(p.b) || p.b[p.i] != '"' {
					return errSyntax
				}
				if err := p.skipStr(); err != nil {
					return err
				}
				p.space()
				if p.i >= len(p.b) || p.b[p.i] != ':' {
					return errSyntax
				}
				p.i++
				p.space()
			}
			if err := p.skip(depth + 1); err != nil {
				return err
			}
			if more, err := p.next(end); !more {
				return err
			}
		}
	case c == '"':
		return p.skipStr()
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := p.num()
		return err
	}
	return errSyntax
}

// skipStr checks and passes over a string: escapes must be JSON's; invalid
// UTF-8 is accepted, as encoding/json accepts it.
func (p *argParser) skipStr() error {
	p.i++
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return nil
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return errSyntax
			}
			switch p.b[p.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			case 'u':
				if p.i+6 > len(p.b) {
					return errSyntax
				}
				for _, h := range p.b[p.i+2 : p.i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return errSyntax
					}
				}
				p.i += 6
			default:
				return errSyntax
			}
			continue
		case c < 0x20:
			return errSyntax
		}
		p.i++
	}
	return errSyntax
}
