package bindings

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/sandcall/sandcall/sandbox/jsonscan"
)

// Cutting a tool's output by whole rows.
//
// Why cut rather than fail? A tool that returns 5,000 rows where its budget
// holds 1,200 has still answered; failing the whole call with
// E_OUTPUT_LIMIT makes the program (or the model) call again with the same
// arguments and fail again. So the broker keeps the longest prefix of whole
// items that fits and says how many it left out. It never cuts inside an
// item: a half row is wrong data, a missing row is merely less data.
//
// Why is a cut top-level array returned as an array? A program written
// against the tool's declared type (`for (const r of await tools.x())`,
// `rows.map(...)`) must keep working: wrapping the prefix in
// {items, truncated, omitted} would turn every over-budget call into a
// TypeError far from its cause. The cut is reported out of band instead: a
// line in the run's logs naming the tool and the count, calls.truncated in
// the run's result, the audit record, and for a direct MCP call the
// result's _meta and a text note. An object result has room for the
// markers, so a cut object carries them in band: `"truncated": true,
// "omitted": K` at its root (unless it already has keys of those names, in
// which case the cut is reported out of band only, never by overwriting the
// tool's own fields). A direct MCP caller never gets in-band markers, since
// MCP clients check structured content against the tool's output schema,
// which may be closed.
//
// Anything else (one huge string, a deep object, two large arrays, an
// array whose first item alone is over the budget) cannot be cut by rows,
// and the call fails with E_OUTPUT_LIMIT as before.

// rowCut describes a cut: the array that was cut ("" for a top-level
// array), how many items were kept and how many were left out.
type rowCut struct {
	Field   string
	Kept    int
	Omitted int
	// Marked is true when the markers were written into the result.
	Marked bool
}

// cutRows cuts res, a tool's JSON result longer than budget bytes, by whole
// items so that the result is at most budget bytes: a top-level array keeps
// its longest prefix of items that fits; an object's largest top-level
// array field keeps its longest prefix, with the rest of the object as it
// was and, if mark, `"truncated":true,"omitted":K` added at the root. It
// reports false when res is not valid JSON, is neither, or cannot fit with
// at least one item. The cut is exact (no further item would fit) and takes
// time linear in len(res).
func cutRows(res []byte, budget int, mark bool) ([]byte, rowCut, bool) {
	b := jsonscan.Trim(res)
	if len(b) < 2 || budget < 2 || !json.Valid(b) {
		return nil, rowCut{}, false
	}
	switch b[0] {
	case '[':
		n := jsonscan.Count(b, 0)
		k, size := longestPrefix(b, 0, n, 0, budget, nil)
		if k == 0 {
			return nil, rowCut{}, false
		}
		out := make([]byte, 0, size)
		out = appendItems(out, b, 0, k)
		return out, rowCut{Kept: k, Omitted: n - k}, true
	case '{':
		return cutObject(b, budget, mark)
	}
	return nil, rowCut{}, false
}

// cutObject is cutRows for an object.
func cutObject(b []byte, budget int, mark bool) ([]byte, rowCut, bool) {
	// Find the largest array-valued member and whether the markers' keys
	// are taken.
	var field string
	vs, ve := -1, -1
	taken := false
	for it := jsonscan.Elems(b, 0); ; {
		ks, ke, s, e, ok := it.Member()
		if !ok {
			break
		}
		key := unquoteKey(b[ks:ke])
		if key == "truncated" || key == "omitted" {
			taken = true
		}
		if b[s] == '[' && e-s > ve-vs {
			field, vs, ve = key, s, e
		}
	}
	if vs < 0 {
		return nil, rowCut{}, false
	}
	last := len(b) - 1 // the closing '}'
	n := jsonscan.Count(b, vs)
	mark = mark && !taken
	// size(k) = rest + "[" + items + "]" + marker(total-k) + "}"
	rest := vs + (last - ve)
	var marker func(omitted int) int
	if mark {
		marker = func(omitted int) int { return len(`,"truncated":true,"omitted":`) + digits(omitted) }
	}
	best, bestSize := longestPrefix(b, vs, n, rest+1, budget, marker)
	if best == 0 {
		return nil, rowCut{}, false
	}
	out := make([]byte, 0, bestSize)
	out = append(out, b[:vs]...)
	out = appendItems(out, b, vs, best)
	out = append(out, b[ve:last]...)
	if mark {
		out = append(out, `,"truncated":true,"omitted":`...)
		out = strconv.AppendInt(out, int64(n-best), 10)
	}
	out = append(out, '}')
	return out, rowCut{Field: field, Kept: best, Omitted: n - best, Marked: mark}, true
}

// longestPrefix returns how many of the first items of the array at b[at]
// (n items in all) fit in budget, and the size then: fixed bytes around the
// array, plus "[" + the items joined by "," + "]", plus marker(omitted)
// when marker is not nil. It stops at the first prefix whose items alone
// no longer fit: every further prefix is longer still.
func longestPrefix(b []byte, at, n, fixed, budget int, marker func(omitted int) int) (best, bestSize int) {
	k, sum := 0, 0
	for it := jsonscan.Elems(b, at); ; {
		s, e, ok := it.Next()
		if !ok {
			return best, bestSize
		}
		add := e - s
		if k > 0 {
			add++
		}
		sum += add
		k++
		size := fixed + 2 + sum
		if size > budget {
			return best, bestSize
		}
		if marker != nil {
			size += marker(n - k)
		}
		if size <= budget {
			best, bestSize = k, size
		}
	}
}

// appendItems appends "[" + the first k items of the array that starts at
// b[at], joined by "," + "]".
func appendItems(out, b []byte, at, k int) []byte {
	out = append(out, '[')
	it := jsonscan.Elems(b, at)
	for j := 0; j < k; j++ {
		s, e, ok := it.Next()
		if !ok {
			break
		}
		if j > 0 {
			out = append(out, ',')
		}
		out = append(out, b[s:e]...)
	}
	return append(out, ']')
}

// unquoteKey returns the text of a quoted key, as a JSON decoder reads it
// (escapes resolved, invalid UTF-8 replaced).
func unquoteKey(q []byte) string {
	if len(q) < 2 {
		return ""
	}
	if bytes.IndexByte(q, '\\') < 0 && utf8.Valid(q) {
		return string(q[1 : len(q)-1])
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return ""
	}
	return s
}

// addKey returns obj, a JSON object, with key set to the string val as its
// last member. It reports false, leaving obj alone, when obj is not an
// object or already has the key: a tool's own fields are never overwritten.
func addKey(obj []byte, key, val string) ([]byte, bool) {
	b := jsonscan.Trim(obj)
	if len(b) < 2 || b[0] != '{' || !json.Valid(b) {
		return obj, false
	}
	empty := true
	for it := jsonscan.Elems(b, 0); ; {
		ks, ke, _, _, ok := it.Member()
		if !ok {
			break
		}
		empty = false
		if unquoteKey(b[ks:ke]) == key {
			return obj, false
		}
	}
	k, _ := json.Marshal(key)
	v, _ := json.Marshal(val)
	out := make([]byte, 0, len(b)+len(k)+len(v)+2)
	out = append(out, b[:len(b)-1]...)
	if !empty {
		out = append(out, ',')
	}
	out = append(out, k...)
	out = append(out, ':')
	out = append(out, v...)
	return append(out, '}'), true
}

// digits returns the length of n (≥ 0) in decimal.
func digits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}
