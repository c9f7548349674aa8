package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sandcall/sandcall/sandbox"
)

// Stage 4, explain: errors a model can act on (the JSON pointer of the
// argument, what was expected, what was given, a hint), and the path
// tracking they need. Only reached when validation fails.

// errQuiet is what a failed check returns while trying alternatives.
var errQuiet = &sandbox.Error{Code: sandbox.EToolArgs, Message: "does not match"}

func (st *vstate) syntax(pos int, msg string) int {
	if st.synMsg == "" {
		st.synPos, st.synMsg = pos, msg
	}
	return -1
}

func (st *vstate) syntaxError() *sandbox.Error {
	msg := st.synMsg
	if msg == "" {
		msg = "unexpected end of input"
	}
	return &sandbox.Error{
		Code:    sandbox.EToolArgs,
		Message: fmt.Sprintf("arguments are not valid JSON: %s at offset %d", msg, st.synPos),
		Hint:    "Pass the arguments as one JSON object.",
	}
}

// fail returns the error make builds, or errQuiet while alternatives are
// being tried (so that a failed alternative costs no formatting).
func (st *vstate) fail(make func() *sandbox.Error) *sandbox.Error {
	if st.quiet > 0 {
		return errQuiet
	}
	return make()
}

func (st *vstate) typeMismatch(n *node, pos int, kind jsonType) (int, *sandbox.Error) {
	end := st.skip(pos)
	if end < 0 {
		return -1, nil
	}
	return end, st.fail(func() *sandbox.Error {
		hint := fmt.Sprintf("Pass %s as %s.", st.name(), typeNames(n.types))
		if n.hasEnum && len(n.enum) > 0 {
			hint = "Use one of: " + listValues(n.enum) + "."
		}
		if kind == tString && n.types&(tInteger|tNumber) != 0 {
			hint += " Numbers go without quotes."
		}
		if kind == tNumber && n.types&tInteger != 0 {
			hint += " Write integers without a decimal point or exponent."
		}
		return st.errorf(fmt.Sprintf("%s: expected %s, got %s %s", st.subject(), typeNames(n.types), kindName(kind), st.echo(pos, end)), hint)
	})
}

func (st *vstate) enumError(n *node, pos, end int, s string) *sandbox.Error {
	e := st.errorf(fmt.Sprintf("%s: %s is not one of the allowed values", st.subject(), st.echo(pos, end)),
		"Use one of: "+listValues(n.enum)+".")
	if s != "" && n.enumStr != nil {
		if best := closest(s, n.enumStr); best != "" {
			e.Hint = "Did you mean " + strconv.Quote(best) + "? " + e.Hint
		}
	}
	e.AllowedValues = slices.Clone(n.enum)
	return e
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func (st *vstate) duplicateError() *sandbox.Error {
	if st.quiet > 0 {
		return errQuiet
	}
	return st.errorf(st.subject()+" is given more than once", "Pass each argument once.")
}

func (st *vstate) countError(n *node, count int) *sandbox.Error {
	if st.quiet > 0 {
		return errQuiet
	}
	if count < n.minProps {
		return st.errorf(fmt.Sprintf("%s has %d properties, fewer than the minimum of %d", st.subject(), count, n.minProps), "")
	}
	return st.errorf(fmt.Sprintf("%s has %d properties, more than the maximum of %d", st.subject(), count, n.maxProps), "")
}

func (st *vstate) errorf(msg, hint string) *sandbox.Error {
	return &sandbox.Error{
		Code:    sandbox.EToolArgs,
		Message: sandbox.Cap(msg, sandbox.MaxMessageBytes),
		Hint:    sandbox.Cap(hint, sandbox.MaxMessageBytes),
		Path:    st.pointer(),
	}
}

func (st *vstate) segKey(s seg) string {
	if s.index >= 0 {
		return strconv.Itoa(int(s.index))
	}
	return st.unquote(int(s.start), int(s.end), s.esc)
}

// pointer renders the current path as a JSON pointer.
func (st *vstate) pointer() string {
	var b strings.Builder
	for _, s := range st.segs() {
		b.WriteByte('/')
		b.WriteString(escapePointer(st.segKey(s)))
	}
	return b.String()
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// name renders the current path as a program would write it: level,
// filters[0].level.
func (st *vstate) name() string {
	if st.depth == 0 {
		return "the arguments"
	}
	var b strings.Builder
	for i, s := range st.segs() {
		if s.index >= 0 {
			b.WriteString("[" + strconv.Itoa(int(s.index)) + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(st.segKey(s))
	}
	return strconv.Quote(sandbox.Cap(b.String(), 2*maxEcho))
}

// subject is how a message names the current value: argument "level".
func (st *vstate) subject() string {
	if st.depth == 0 {
		return "the arguments"
	}
	return "argument " + st.name()
}

// echo repeats data[pos:end] in a message, capped.
func (st *vstate) echo(pos, end int) string {
	return sandbox.Cap(string(st.data[pos:end]), maxEcho)
}

func (st *vstate) missingError(p prop) *sandbox.Error {
	if st.quiet > 0 {
		return errQuiet
	}
	ptr := st.pointer() + "/" + escapePointer(p.name)
	where := ""
	if st.depth > 0 {
		where = " in " + st.subject()
	}
	hint := fmt.Sprintf("Add %q", p.name)
	switch {
	case p.node != nil && p.node.hasEnum && len(p.node.enum) > 0:
		hint += " with one of: " + listValues(p.node.enum)
	case p.node != nil && p.node.types != 0:
		hint += " (" + typeNames(p.node.types) + ")"
	}
	e := &sandbox.Error{
		Code:    sandbox.EToolArgs,
		Message: fmt.Sprintf("missing required argument %q%s", p.name, where),
		Hint:    sandbox.Cap(hint+".", sandbox.MaxMessageBytes),
		Path:    ptr,
	}
	if p.node != nil && p.node.hasEnum {
		e.AllowedValues = slices.Clone(p.node.enum)
	}
	return e
}

func (st *vstate) unknownError(n *node) *sandbox.Error {
	if st.quiet > 0 {
		return errQuiet
	}
	key := st.segKey(st.last())
	names := make([]string, len(n.props))
	for i, p := range n.props {
		names[i] = p.name
	}
	var hint string
	if best := closest(key, names); best != "" {
		hint = fmt.Sprintf("Did you mean %q? ", best)
	}
	if len(names) == 0 {
		hint += "It takes no arguments here: pass {}."
	} else {
		hint += "Known arguments: " + sandbox.Cap(strings.Join(names, ", "), 1024) + "."
	}
	return st.errorf("unknown argument "+st.name(), hint)
}

// closest returns the candidate nearest to s (edit distance, ignoring case),
// or "" if none is near enough to be a plausible typo, or if two candidates
// are equally near (a guess would mislead more than help).
func closest(s string, candidates []string) string {
	if len(s) > 256 {
		return ""
	}
	ls := strings.ToLower(s)
	best, bestD, tie := "", math.MaxInt, false
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := EditDistance(ls, lc)
		if d > 0 && len(ls) >= 3 && len(lc) >= 3 && (strings.Contains(lc, ls) || strings.Contains(ls, lc)) {
			d = 1 // a prefix or part of the name
		}
		// Short names need a case-only difference: "l3" is "L3", "L9" is nothing.
		if d > 0 && (len(ls) < 4 || d > max(2, max(len(ls), len(lc))/3)) {
			continue
		}
		switch {
		case d < bestD:
			best, bestD, tie = c, d, false
		case d == bestD:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// EditDistance is the Levenshtein distance of a and b, counted in bytes,
// for suggesting the nearest of a few short names ("did you mean …"). It
// is quadratic, so a b over 256 bytes counts as infinitely far.
func EditDistance(a, b string) int {
	if len(b) > 256 {
		return math.MaxInt / 2
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// listValues renders enum values for a hint: "L1", "L2", "L3".
func listValues(vs []any) string {
	const maxShown = 25
	var b strings.Builder
	for i, v := range vs {
		if i == maxShown {
			fmt.Fprintf(&b, ", … (%d more)", len(vs)-maxShown)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		j, err := json.Marshal(v)
		if err != nil {
			j = []byte("?")
		}
		b.WriteString(sandbox.Cap(string(j), maxEcho))
	}
	return b.String()
}

func kindName(k jsonType) string {
	switch k {
	case tNull:
		return "null"
	case tBool:
		return "boolean"
	case tObject:
		return "object"
	case tArray:
		return "array"
	case tInteger:
		return "integer"
	case tNumber:
		return "number"
	case tString:
		return "string"
	}
	return "value"
}

// typeNames renders a type set: "an integer", "a string or null".
func typeNames(t jsonType) string {
	if t == 0 {
		return "any value"
	}
	var parts []string
	add := func(bit jsonType, s string) {
		if t&bit != 0 {
			parts = append(parts, s)
		}
	}
	add(tString, "a string")
	if t&tNumber != 0 {
		parts = append(parts, "a number")
	} else {
		add(tInteger, "an integer")
	}
	add(tBool, "a boolean")
	add(tObject, "an object")
	add(tArray, "an array")
	add(tNull, "null")
	switch len(parts) {
	case 1:
		return parts[0]
	default:
		return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
	}
}

func (v *validator) exampleKey() string {
	if v.root != nil && len(v.root.props) > 0 {
		return strconv.Quote(v.root.props[0].name) + ": ..."
	}
	return ""
}

// pushKey and pushIndex record a step into a container. The state stays
// small (validation often runs on a fresh goroutine, whose stack would
// otherwise have to grow): deep paths spill into more.
func (st *vstate) pushKey(start, end int, esc bool) {
	st.push(seg{start: int32(start), end: int32(end), index: -1, esc: esc})
}

func (st *vstate) pushIndex(i int) { st.push(seg{index: int32(i)}) }

func (st *vstate) push(s seg) {
	if st.depth < len(st.path) {
		st.path[st.depth] = s
	} else {
		st.more = append(st.more[:st.depth-len(st.path)], s)
	}
	st.depth++
}

func (st *vstate) pop() { st.depth-- }

// segs returns the current path.
func (st *vstate) segs() []seg {
	if st.depth <= len(st.path) {
		return st.path[:st.depth]
	}
	return append(st.path[:len(st.path):len(st.path)], st.more[:st.depth-len(st.path)]...)
}

// last returns the innermost step of the path.
func (st *vstate) last() seg {
	if st.depth <= len(st.path) {
		return st.path[st.depth-1]
	}
	return st.more[st.depth-1-len(st.path)]
}

// seg is one step of the path to the value being validated: a key (a span
// of data, still JSON-escaped if esc) or an array index.
type seg struct {
	start, end int32
	index      int32 // -1 for a key
	esc        bool
}
