package main

import (
	"errors"
	"strconv"
)

var errRows = errors.New("get_expenses: not an array of expense objects")

// expenseRows reads get_expenses' result, a JSON array of objects, keeping
// each row's category and amount: a scan of the bytes, where
// encoding/json's reflection and byte-at-a-time scanner (twice over: it
// checks the whole input, then decodes it) took this guest about half of
// its run to decode the 50 results (313 KB), in wazero's compiled code:
// 53-73 ms a run, against 24-31 ms with this. The host sent valid compact
// JSON (wasmguest hands it over unscanned, as a json.RawMessage); this
// reads what it needs and refuses anything else.
func expenseRows(b []byte) ([]expenseRow, error) {
	c := cursor{b: b}
	if !c.eat('[') {
		return nil, errRows
	}
	var rows []expenseRow
	for first := true; ; first = false {
		if c.eat(']') {
			return rows, nil
		}
		if !first && !c.eat(',') || !c.eat('{') {
			return nil, errRows
		}
		var r expenseRow
		for firstKey := true; !c.eat('}'); firstKey = false {
			if !firstKey && !c.eat(',') {
				return nil, errRows
			}
			k, ok := c.str()
			if !ok || !c.eat(':') {
				return nil, errRows
			}
			switch string(k) {
			case "category":
				v, ok := c.str()
				if !ok {
					return nil, errRows
				}
				r.Category = string(v)
			case "amount":
				v, err := strconv.ParseFloat(string(c.token()), 64)
				if err != nil {
					return nil, errRows
				}
				r.Amount = v
			default:
				if !c.skip() {
					return nil, errRows
				}
			}
		}
		rows = append(rows, r)
	}
}

type cursor struct {
	b []byte
	i int
}

func (c *cursor) ws() {
	for c.i < len(c.b) && (c.b[c.i] == ' ' || c.b[c.i] == '\n' || c.b[c.i] == '\t' || c.b[c.i] == '\r') {
		c.i++
	}
}

func (c *cursor) eat(ch byte) bool {
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == ch {
		c.i++
		return true
	}
	return false
}

// str reads a string and returns its raw contents (escapes as they are).
func (c *cursor) str() ([]byte, bool) {
	if !c.eat('"') {
		return nil, false
	}
	start := c.i
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case '\\':
			c.i += 2
		case '"':
			c.i++
			return c.b[start : c.i-1], true
		default:
			c.i++
		}
	}
	return nil, false
}

// token reads a number, true, false or null.
func (c *cursor) token() []byte {
	c.ws()
	start := c.i
	for c.i < len(c.b) && c.b[c.i] != ',' && c.b[c.i] != '}' && c.b[c.i] != ']' && c.b[c.i] != ' ' {
		c.i++
	}
	return c.b[start:c.i]
}

// skip steps over one value.
func (c *cursor) skip() bool {
	c.ws()
	if c.i >= len(c.b) {
		return false
	}
	switch c.b[c.i] {
	case '"':
		_, ok := c.str()
		return ok
	case '{', '[':
		depth := 0
		for c.i < len(c.b) {
			switch c.b[c.i] {
			case '"':
				if _, ok := c.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			c.i++
			if depth == 0 {
				return true
			}
		}
		return false
	}
	return len(c.token()) > 0
}
