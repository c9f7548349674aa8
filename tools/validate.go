package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/jsonscan"
)

// Argument validation, by stage: compile (validate_compile.go), scan
// (validate_scan.go), validate (this file: the walker), explain
// (validate_explain.go), and the fallback to jsonschema-go for schemas
// beyond the subset (validate_full.go).
//
// An input schema is compiled once (compileValidator, called by Catalog.Add
// and Func) into a tree of nodes; Validate then walks the raw argument bytes
// and the node tree together, in one pass, without decoding into Go values:
// validating {"n":5} allocates nothing.
//
// Supported keywords: type (a name or a list; "integer" accepts numbers
// written without a fraction or exponent, as Go and JavaScript write
// integers, because Go's decoder rejects 1.0 for an int), enum, const, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, multipleOf, minLength, maxLength (in code points),
// pattern (Go RE2 syntax, compiled once), properties, required,
// additionalProperties (false or a schema), patternProperties, minProperties,
// maxProperties, items, prefixItems (and draft-07 array items with
// additionalItems), minItems, maxItems, allOf, anyOf, oneOf, not, and local
// $ref ("#", "#/$defs/...", "#/definitions/...", or any JSON pointer into
// the root schema). A schema using any other keyword (uniqueItems,
// if/then/else, dependent*, contains, propertyNames, unevaluated*, anchors,
// $dynamicRef, embedded $id) is validated by jsonschema-go instead
// (validate_full.go): never silently weakened. format is an annotation, as
// in draft 2020-12 and jsonschema-go. A schema neither can compile (a remote
// $ref, a pattern Go cannot compile) is rejected when the tool is added.
//
// Beyond the schema, the arguments must be one JSON object (empty or null
// arguments count as {}), with valid UTF-8 strings, no declared property
// given twice, and at most maxNesting levels of nesting.

// maxNesting caps how deeply arguments may nest (objects and arrays).
const maxNesting = 64

// maxSchemaSteps caps schema recursion at one position (a $ref cycle that
// consumes no input), so a cyclic schema cannot loop forever.
const maxSchemaSteps = 2048

// maxEcho caps how much of an argument value an error message repeats.
const maxEcho = 64

// jsonType is a set of JSON types. An argument number is tInteger if
// written without fraction or exponent, else tNumber; the schema type
// "number" allows both.
type jsonType uint8

const (
	tNull jsonType = 1 << iota
	tBool
	tObject
	tArray
	tNumber // a number written with a fraction or exponent (in a type set: any number)
	tInteger
	tString
)

// validator is an input schema compiled once.
type validator struct {
	root *node
	// full, when set, decides validity: the schema uses keywords beyond
	// the subset (named by beyond), and root only accepts any value.
	full   *jsonschema.Resolved
	beyond string
}

// node is one compiled schema.
type node struct {
	never bool     // the false schema: nothing validates
	types jsonType // allowed types; 0 means any

	hasEnum  bool
	enum     []any    // the schema's values, reported as AllowedValues
	enumStr  []string // when every value is a string (fast path)
	enumJSON []any    // canonical decoded values (slow path)
	hasConst bool
	constVal any // canonical decoded value
	constRaw any // as in the schema

	hasMin, hasMax, hasExMin, hasExMax bool
	min, max, exMin, exMax             float64
	multipleOf                         float64

	minLen, maxLen int // -1 if absent
	pattern        *regexp.Regexp

	// objects
	props      []prop
	propIndex  map[string]int // for many properties
	closed     bool           // additionalProperties: false
	additional *node          // nil: anything
	patProps   []patProp
	minProps   int
	maxProps   int // -1 if absent

	// arrays
	prefix   []*node
	items    *node // for elements after prefix; nil: anything
	minItems int
	maxItems int // -1 if absent

	allOf, anyOf, oneOf []*node
	not                 *node
	ref                 *node

	applies   bool // any of enum, const, $ref, allOf, anyOf, oneOf, not
	numChecks bool // any keyword that needs a number's value
	strChecks bool // any keyword that needs a string's value
}

type prop struct {
	name     string
	node     *node // nil: anything
	required bool
	declared bool // in properties; a name only in required is not, and stays subject to additionalProperties
}

type patProp struct {
	re   *regexp.Regexp
	node *node
}

// Validate checks args against the tool's input schema. It returns nil or an
// E_TOOL_ARGS *sandbox.Error naming the tool, the JSON pointer of the first
// offending argument (properties in schema order), what was expected and
// what was given, and a hint.
func (t *Tool) Validate(args json.RawMessage) error {
	v := t.validator
	if v == nil {
		// Not added to a catalog: compile now (slow, but correct).
		var err error
		if v, err = compileValidator(t.InputSchema); err != nil {
			return &sandbox.Error{Code: sandbox.EInternal, Message: "the tool's input schema is invalid", Tool: t.Name}
		}
	}
	if e := v.validate(args); e != nil {
		e.Tool = t.Name
		return e
	}
	return nil
}

// validate checks one set of arguments.
func (v *validator) validate(args []byte) *sandbox.Error {
	data := jsonscan.Trim(args)
	if len(data) == 0 || string(data) == "null" {
		data = emptyObject
	}
	st := vstate{data: data}
	if data[0] != '{' {
		end := st.skip(0)
		if end < 0 {
			return st.syntaxError()
		}
		return &sandbox.Error{
			Code:    sandbox.EToolArgs,
			Message: "arguments must be a JSON object, got " + kindName(st.kindAt(0)),
			Hint:    "Pass the arguments as one object, e.g. {" + v.exampleKey() + "}.",
		}
	}
	return v.validateValue(data)
}

// validateValue checks one JSON value (trimmed) against the schema: the
// fast walker, then jsonschema-go for a schema beyond the subset.
func (v *validator) validateValue(data []byte) *sandbox.Error {
	st := vstate{data: data}
	end, e := st.value(v.root, 0)
	if end < 0 {
		return st.syntaxError()
	}
	if end = jsonscan.Space(data, end); end != len(data) {
		st.synPos, st.synMsg = end, "unexpected data after the arguments object"
		return st.syntaxError()
	}
	if e == nil && v.full != nil {
		e = v.validateFull(data)
	}
	return e
}

var emptyObject = []byte("{}")

// vstate is the state of one validation.
type vstate struct {
	data   []byte
	nest   int // containers open
	steps  int // schema recursion at the current position
	quiet  int // >0 while trying alternatives: errors are not formatted
	synPos int
	synMsg string
	depth  int    // len of the path
	path   [6]seg // the path's first steps: enough for most arguments
	more   []seg  // the steps after path's, allocated when needed
}

// value validates the value at data[pos:] (after optional whitespace)
// against n. It returns the end of the value, or -1 on a syntax error (which
// aborts the whole validation). A schema failure returns a valid end and the
// error, so callers can go on to find an earlier error in schema order.
func (st *vstate) value(n *node, pos int) (int, *sandbox.Error) {
	pos = jsonscan.Space(st.data, pos)
	if pos >= len(st.data) {
		return st.syntax(pos, "unexpected end of input"), nil
	}
	if n == nil {
		return st.skip(pos), nil
	}
	if st.steps >= maxSchemaSteps {
		return st.tooDeep(pos)
	}
	st.steps++
	end, e := st.check(n, pos)
	st.steps--
	return end, e
}

// Validation often runs on a fresh goroutine (one per tool call), whose
// small stack must not have to grow: the hot functions (value, check,
// object1, number, str) keep small frames, without closures or formatting;
// everything that builds an error, and every rarely used keyword, lives in
// separate functions.

func (st *vstate) tooDeep(pos int) (int, *sandbox.Error) {
	end := st.skip(pos)
	return end, st.fail(func() *sandbox.Error {
		return st.errorf("the input schema recurses too deeply here", "")
	})
}

func (st *vstate) notAllowed(pos int) (int, *sandbox.Error) {
	end := st.skip(pos)
	if end < 0 {
		return -1, nil
	}
	return end, st.fail(func() *sandbox.Error {
		return st.errorf(st.subject()+" is not allowed", "Remove it.")
	})
}

// check is value after the common checks (no defer: this is the hot path).
func (st *vstate) check(n *node, pos int) (int, *sandbox.Error) {
	if n.never {
		return st.notAllowed(pos)
	}

	c := st.data[pos]
	var (
		end  int
		kind jsonType
		e    *sandbox.Error
	)
	switch {
	case c == '{':
		kind = tObject
		if n.types != 0 && n.types&tObject == 0 {
			return st.typeMismatch(n, pos, kind)
		}
		end, e = st.object(n, pos)
	case c == '[':
		kind = tArray
		if n.types != 0 && n.types&tArray == 0 {
			return st.typeMismatch(n, pos, kind)
		}
		end, e = st.array(n, pos)
	case c == '"':
		kind = tString
		if n.types != 0 && n.types&tString == 0 {
			return st.typeMismatch(n, pos, kind)
		}
		end, e = st.str(n, pos)
	case c == 't' || c == 'f' || c == 'n':
		kind = tBool
		if c == 'n' {
			kind = tNull
		}
		end = st.literal(pos)
		if end < 0 {
			return -1, nil
		}
		if n.types != 0 && n.types&kind == 0 {
			return st.typeMismatch(n, pos, kind)
		}
		if n.hasEnum || n.hasConst {
			e = st.literalEnum(n, pos, end, kind == tBool && c == 't')
		}
	case c == '-' || (c >= '0' && c <= '9'):
		end, e = st.number(n, pos)
	default:
		return st.syntax(pos, fmt.Sprintf("invalid character %q", c)), nil
	}
	if end < 0 {
		return -1, nil
	}
	if e != nil || !n.applies {
		return end, e
	}
	return end, st.apply(n, pos, end, kind)
}

func (st *vstate) literalEnum(n *node, pos, end int, val bool) *sandbox.Error {
	if st.data[pos] == 'n' {
		return st.checkEnum(n, pos, end, nil)
	}
	return st.checkEnum(n, pos, end, val)
}

// apply checks the keywords that apply to a value whatever its type: enum
// and const of objects and arrays, $ref, allOf, anyOf, oneOf, not.
func (st *vstate) apply(n *node, pos, end int, kind jsonType) (e *sandbox.Error) {
	if (kind == tObject || kind == tArray) && (n.hasEnum || n.hasConst) {
		if e = st.checkEnum(n, pos, end, decodeSpan); e != nil {
			return e
		}
	}
	if n.ref != nil {
		if _, e = st.value(n.ref, pos); e != nil {
			return e
		}
	}
	for _, a := range n.allOf {
		if _, e = st.value(a, pos); e != nil {
			return e
		}
	}
	if len(n.anyOf) > 0 {
		if e = st.alternatives(n.anyOf, pos, false); e != nil {
			return e
		}
	}
	if len(n.oneOf) > 0 {
		if e = st.alternatives(n.oneOf, pos, true); e != nil {
			return e
		}
	}
	if n.not != nil {
		st.quiet++
		_, ne := st.value(n.not, pos)
		st.quiet--
		if ne == nil {
			return st.fail(func() *sandbox.Error {
				return st.errorf(st.subject()+": "+st.echo(pos, end)+" matches a form that is not allowed", "")
			})
		}
	}
	return nil
}

func (st *vstate) alternatives(alts []*node, pos int, one bool) *sandbox.Error {
	matched := 0
	st.quiet++
	for _, a := range alts {
		if _, e := st.value(a, pos); e == nil {
			matched++
			if !one {
				break
			}
		}
	}
	st.quiet--
	if matched == 1 || (matched > 1 && !one) {
		return nil
	}
	if st.quiet > 0 {
		return errQuiet
	}
	if matched > 1 {
		return st.errorf(st.subject()+" matches more than one of the allowed forms", "Make it match exactly one form; see the tool's input schema.")
	}
	// Explain with the first alternative that admits the value's type.
	kind := st.kindAt(pos)
	if kind == tNumber && st.isIntegral(pos) {
		kind = tInteger
	}
	var union jsonType
	for _, a := range alts {
		if a.types == 0 || a.types&kind != 0 {
			_, e := st.value(a, pos)
			if e != nil {
				return e
			}
		}
		union |= a.types
	}
	return st.errorf(fmt.Sprintf("%s: expected %s, got %s", st.subject(), typeNames(union), kindName(kind)),
		fmt.Sprintf("Pass %s as %s.", st.name(), typeNames(union)))
}

func (st *vstate) str(n *node, pos int) (int, *sandbox.Error) {
	end, esc := st.scanString(pos)
	if end < 0 {
		return -1, nil
	}
	if !n.strChecks {
		return end, nil
	}
	return end, st.strChecks(n, pos, end, esc)
}

// strChecks checks the keywords that need a string's value.
func (st *vstate) strChecks(n *node, pos, end int, esc bool) *sandbox.Error {
	var raw []byte
	var s string
	if esc {
		s = st.unquote(pos, end, true)
		raw = []byte(s)
	} else {
		raw = st.data[pos+1 : end-1]
	}
	if n.hasEnum && n.enumStr != nil {
		found := false
		for _, e := range n.enumStr {
			if string(raw) == e {
				found = true
				break
			}
		}
		if !found {
			return st.fail(func() *sandbox.Error { return st.enumError(n, pos, end, string(raw)) })
		}
	} else if n.hasEnum || n.hasConst {
		if e := st.checkEnum(n, pos, end, string(raw)); e != nil {
			return e
		}
	}
	if n.minLen >= 0 || n.maxLen >= 0 {
		l := utf8.RuneCount(raw)
		if n.minLen >= 0 && l < n.minLen {
			return st.fail(func() *sandbox.Error {
				return st.errorf(fmt.Sprintf("%s: %s is shorter than the minimum of %d characters", st.subject(), st.echo(pos, end), n.minLen),
					fmt.Sprintf("Pass at least %d characters.", n.minLen))
			})
		}
		if n.maxLen >= 0 && l > n.maxLen {
			return st.fail(func() *sandbox.Error {
				return st.errorf(fmt.Sprintf("%s: a string of %d characters is longer than the maximum of %d", st.subject(), l, n.maxLen),
					fmt.Sprintf("Pass at most %d characters.", n.maxLen))
			})
		}
	}
	if n.pattern != nil && !n.pattern.Match(raw) {
		return st.fail(func() *sandbox.Error {
			return st.errorf(fmt.Sprintf("%s: %s does not match the pattern %s", st.subject(), st.echo(pos, end), n.pattern),
				"Pass a value matching "+n.pattern.String()+".")
		})
	}
	return nil
}

// checkEnum checks enum and const against a decoded scalar (string, bool or
// nil) or, if val is the sentinel decodeSpan, against data[pos:end] decoded.
func (st *vstate) checkEnum(n *node, pos, end int, val any) *sandbox.Error {
	if val == decodeSpan {
		var dv any
		if err := json.Unmarshal(st.data[pos:end], &dv); err != nil {
			return st.fail(func() *sandbox.Error { return st.errorf(st.subject()+" cannot be decoded", "") })
		}
		val = dv
	}
	if n.hasEnum {
		found := false
		if n.enumStr != nil {
			s, ok := val.(string)
			found = ok && slices.Contains(n.enumStr, s)
		} else {
			for _, e := range n.enumJSON {
				if jsonEqual(e, val) {
					found = true
					break
				}
			}
		}
		if !found {
			s, _ := val.(string)
			return st.fail(func() *sandbox.Error { return st.enumError(n, pos, end, s) })
		}
	}
	if n.hasConst && !jsonEqual(n.constVal, val) {
		return st.fail(func() *sandbox.Error {
			want, _ := json.Marshal(n.constRaw)
			return st.errorf(fmt.Sprintf("%s: must be %s, got %s", st.subject(), sandbox.Cap(string(want), maxEcho), st.echo(pos, end)),
				fmt.Sprintf("Pass %s.", sandbox.Cap(string(want), maxEcho)))
		})
	}
	return nil
}

type decodeSpanT struct{}

var decodeSpan any = decodeSpanT{}

// jsonEqual compares two values decoded by encoding/json.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func (st *vstate) number(n *node, pos int) (int, *sandbox.Error) {
	end, frac := st.scanNumber(pos)
	if end < 0 {
		return -1, nil
	}
	kind := tInteger
	if frac {
		kind = tNumber
	}
	if n.types != 0 && n.types&kind == 0 {
		return st.typeMismatch(n, pos, kind)
	}
	if !n.numChecks {
		return end, nil
	}
	return end, st.numberChecks(n, pos, end)
}

// numberChecks checks the keywords that need a number's value.
func (st *vstate) numberChecks(n *node, pos, end int) *sandbox.Error {
	f, _, ok := parseNumber(st.data[pos:end])
	if !ok {
		return st.fail(func() *sandbox.Error {
			return st.errorf(fmt.Sprintf("%s: %s is out of range", st.subject(), st.echo(pos, end)), "Pass a smaller number.")
		})
	}
	bound := func(cond bool, rel string, b float64, hint string) *sandbox.Error {
		if cond {
			return nil
		}
		return st.fail(func() *sandbox.Error {
			return st.errorf(fmt.Sprintf("%s: %s is %s %s", st.subject(), st.echo(pos, end), rel, fmtNum(b)),
				fmt.Sprintf("Pass a value %s %s.", hint, fmtNum(b)))
		})
	}
	if n.hasMin {
		if e := bound(f >= n.min, "less than the minimum of", n.min, ">="); e != nil {
			return e
		}
	}
	if n.hasMax {
		if e := bound(f <= n.max, "greater than the maximum of", n.max, "<="); e != nil {
			return e
		}
	}
	if n.hasExMin {
		if e := bound(f > n.exMin, "not greater than the exclusive minimum of", n.exMin, ">"); e != nil {
			return e
		}
	}
	if n.hasExMax {
		if e := bound(f < n.exMax, "not less than the exclusive maximum of", n.exMax, "<"); e != nil {
			return e
		}
	}
	if n.multipleOf > 0 {
		q := f / n.multipleOf
		if math.IsInf(q, 0) || math.Abs(q-math.Round(q)) > 1e-9*math.Max(1, math.Abs(q)) {
			return st.fail(func() *sandbox.Error {
				return st.errorf(fmt.Sprintf("%s: %s is not a multiple of %s", st.subject(), st.echo(pos, end), fmtNum(n.multipleOf)),
					fmt.Sprintf("Pass a multiple of %s.", fmtNum(n.multipleOf)))
			})
		}
	}
	if n.hasEnum || n.hasConst {
		if e := st.checkEnum(n, pos, end, f); e != nil {
			return e
		}
	}
	return nil
}

func (st *vstate) object(n *node, pos int) (int, *sandbox.Error) {
	if st.nest >= maxNesting {
		return st.syntax(pos, fmt.Sprintf("arguments nest more than %d levels", maxNesting)), nil
	}
	st.nest++
	end, e := st.object1(n, pos)
	st.nest--
	return end, e
}

func (st *vstate) object1(n *node, pos int) (int, *sandbox.Error) {
	data := st.data
	var (
		seenBits  uint64
		seenMore  []bool
		bestIdx   = -1
		bestErr   *sandbox.Error
		firstErr  *sandbox.Error // unknown or duplicate key: reported first
		extraErr  *sandbox.Error // a value of an additional property
		count     int
		propCount = len(n.props)
	)
	if propCount > 64 {
		seenMore = make([]bool, propCount)
	}
	i := jsonscan.Space(data, pos+1)
	if i < len(data) && data[i] == '}' {
		i++
		goto done
	}
	for {
		i = jsonscan.Space(data, i)
		if i >= len(data) || data[i] != '"' {
			return st.syntax(i, "expected a property name"), nil
		}
		ks := i
		ke, esc := st.scanString(i)
		if ke < 0 {
			return -1, nil
		}
		i = jsonscan.Space(data, ke)
		if i >= len(data) || data[i] != ':' {
			return st.syntax(i, "expected ':' after a property name"), nil
		}
		i++
		count++
		idx := -1
		if propCount > 0 {
			var key string
			if esc {
				key = st.unquote(ks, ke, true)
			}
			keyBytes := data[ks+1 : ke-1]
			if n.propIndex != nil {
				var ok bool
				if esc {
					idx, ok = n.propIndex[key]
				} else {
					idx, ok = n.propIndex[string(keyBytes)]
				}
				if !ok {
					idx = -1
				}
			} else {
				for j := range n.props {
					if (esc && n.props[j].name == key) || (!esc && n.props[j].name == string(keyBytes)) {
						idx = j
						break
					}
				}
			}
		}
		st.pushKey(ks, ke, esc)
		// A key is checked against its properties schema and against every
		// patternProperties schema it matches, all of them; only a key
		// neither declared in properties nor matched falls to
		// additionalProperties. A name listed only in required counts as
		// present but is not declared.
		end := -1
		declared := false
		if idx >= 0 {
			dup := false
			if seenMore != nil {
				dup, seenMore[idx] = seenMore[idx], true
			} else {
				dup = seenBits&(1<<idx) != 0
				seenBits |= 1 << idx
			}
			if dup && firstErr == nil {
				firstErr = st.duplicateError()
			}
			if declared = n.props[idx].declared; declared {
				var e *sandbox.Error
				if end, e = st.value(n.props[idx].node, i); end < 0 {
					return -1, nil
				}
				if e != nil && (bestIdx < 0 || idx < bestIdx) {
					bestIdx, bestErr = idx, e
				}
			}
		}
		matched := false
		for _, pp := range n.patProps {
			if (esc && pp.re.MatchString(st.unquote(ks, ke, true))) || (!esc && pp.re.Match(data[ks+1:ke-1])) {
				matched = true
				var e *sandbox.Error
				if end, e = st.value(pp.node, i); end < 0 {
					return -1, nil
				}
				if e != nil && extraErr == nil {
					extraErr = e
				}
			}
		}
		switch {
		case declared || matched:
		case n.closed:
			if firstErr == nil {
				firstErr = st.unknownError(n)
			}
		case n.additional != nil:
			var e *sandbox.Error
			end, e = st.value(n.additional, i)
			if e != nil && extraErr == nil {
				extraErr = e
			}
		}
		if end < 0 {
			end = st.skip(i)
		}
		if end < 0 {
			return -1, nil
		}
		i = end
		st.pop()
		i = jsonscan.Space(data, i)
		if i < len(data) && data[i] == ',' {
			i++
			continue
		}
		if i < len(data) && data[i] == '}' {
			i++
			break
		}
		return st.syntax(i, "expected ',' or '}' in object"), nil
	}
done:
	if firstErr != nil {
		return i, firstErr
	}
	for j := range n.props {
		if j == bestIdx {
			return i, bestErr
		}
		if !n.props[j].required {
			continue
		}
		seen := false
		if seenMore != nil {
			seen = seenMore[j]
		} else {
			seen = seenBits&(1<<j) != 0
		}
		if !seen {
			return i, st.missingError(n.props[j])
		}
	}
	if extraErr != nil {
		return i, extraErr
	}
	if count < n.minProps || (n.maxProps >= 0 && count > n.maxProps) {
		return i, st.countError(n, count)
	}
	return i, nil
}

func (st *vstate) array(n *node, pos int) (int, *sandbox.Error) {
	if st.nest >= maxNesting {
		return st.syntax(pos, fmt.Sprintf("arguments nest more than %d levels", maxNesting)), nil
	}
	st.nest++
	end, e := st.array1(n, pos)
	st.nest--
	return end, e
}

func (st *vstate) array1(n *node, pos int) (int, *sandbox.Error) {
	data := st.data
	var first *sandbox.Error
	count := 0
	i := jsonscan.Space(data, pos+1)
	if i < len(data) && data[i] == ']' {
		i++
	} else {
		for {
			item := n.items
			if count < len(n.prefix) {
				item = n.prefix[count]
			}
			var (
				end int
				e   *sandbox.Error
			)
			if first != nil {
				end = st.skip(jsonscan.Space(data, i))
			} else {
				st.pushIndex(count)
				end, e = st.value(item, i)
				st.pop()
			}
			if end < 0 {
				return -1, nil
			}
			if e != nil {
				first = e
			}
			count++
			i = jsonscan.Space(data, end)
			if i < len(data) && data[i] == ',' {
				i++
				continue
			}
			if i < len(data) && data[i] == ']' {
				i++
				break
			}
			return st.syntax(i, "expected ',' or ']' in array"), nil
		}
	}
	if count < n.minItems {
		return i, st.fail(func() *sandbox.Error {
			return st.errorf(fmt.Sprintf("%s has %d items, fewer than the minimum of %d", st.subject(), count, n.minItems),
				fmt.Sprintf("Pass at least %d items.", n.minItems))
		})
	}
	if n.maxItems >= 0 && count > n.maxItems {
		return i, st.fail(func() *sandbox.Error {
			return st.errorf(fmt.Sprintf("%s has %d items, more than the maximum of %d", st.subject(), count, n.maxItems),
				fmt.Sprintf("Pass at most %d items.", n.maxItems))
		})
	}
	return i, first
}
