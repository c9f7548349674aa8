package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/sandbox"
)

// Argument validation.
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
// the root schema). Other keywords (format, uniqueItems, if/then/else,
// dependent*, contains, propertyNames, unevaluated*) are annotations here:
// they are not checked. A schema the validator cannot compile (a remote or
// anchor $ref, a pattern Go cannot compile) is rejected when the tool is
// added, never silently weakened.
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
}

type patProp struct {
	re   *regexp.Regexp
	node *node
}

func compileValidator(s *jsonschema.Schema) (*validator, error) {
	if s == nil {
		return &validator{root: &node{types: tObject, closed: true, minLen: -1, maxLen: -1, maxProps: -1, maxItems: -1}}, nil
	}
	c := &compiler{root: s, done: map[*jsonschema.Schema]*node{}, busy: map[*jsonschema.Schema]bool{}}
	n, err := c.compile(s, "#")
	if err != nil {
		return nil, err
	}
	return &validator{root: n}, nil
}

type compiler struct {
	root *jsonschema.Schema
	done map[*jsonschema.Schema]*node
	busy map[*jsonschema.Schema]bool // pure $ref schemas being followed
}

// pureRef reports whether s is only a $ref (plus annotations).
func pureRef(s *jsonschema.Schema) bool {
	if s.Ref == "" {
		return false
	}
	c := *s
	c.Ref, c.Schema, c.ID, c.Comment, c.Title, c.Description = "", "", "", "", "", ""
	c.Defs, c.Definitions, c.Default, c.Examples, c.Deprecated = nil, nil, nil, nil, false
	c.ReadOnly, c.WriteOnly, c.PropertyOrder, c.Format, c.Extra = false, false, nil, "", nil
	return reflect.ValueOf(c).IsZero()
}

func (c *compiler) compile(s *jsonschema.Schema, at string) (*node, error) {
	if s == nil {
		return nil, nil
	}
	if n, ok := c.done[s]; ok {
		return n, nil
	}
	if pureRef(s) {
		if c.busy[s] {
			return nil, fmt.Errorf("%s: circular $ref %q", at, s.Ref)
		}
		c.busy[s] = true
		target, err := c.deref(s.Ref, at)
		if err != nil {
			return nil, err
		}
		n, err := c.compile(target, s.Ref)
		delete(c.busy, s)
		if err != nil {
			return nil, err
		}
		if n == nil {
			n = &node{minLen: -1, maxLen: -1, maxProps: -1, maxItems: -1}
		}
		c.done[s] = n
		return n, nil
	}
	n := &node{minLen: -1, maxLen: -1, maxProps: -1, maxItems: -1}
	c.done[s] = n
	var err error

	if s.Not != nil && isEmptySchema(s.Not) {
		n.never = true // {"not": {}} is the false schema
	} else if s.Not != nil {
		if n.not, err = c.compile(s.Not, at+"/not"); err != nil {
			return nil, err
		}
		if n.not == nil {
			n.never = true
		}
	}
	if s.Type != "" && s.Types != nil {
		return nil, fmt.Errorf("%s: both type and types are set", at)
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	for _, name := range types {
		switch name {
		case "null":
			n.types |= tNull
		case "boolean":
			n.types |= tBool
		case "object":
			n.types |= tObject
		case "array":
			n.types |= tArray
		case "number":
			n.types |= tNumber | tInteger
		case "integer":
			n.types |= tInteger
		case "string":
			n.types |= tString
		default:
			return nil, fmt.Errorf("%s: unknown type %q", at, name)
		}
	}
	if s.Types != nil && len(s.Types) == 0 {
		n.never = true
	}

	if s.Enum != nil {
		n.hasEnum = true
		n.enum = s.Enum
		allStr := true
		for _, v := range s.Enum {
			str, ok := v.(string)
			if !ok {
				allStr = false
				break
			}
			n.enumStr = append(n.enumStr, str)
		}
		if !allStr {
			n.enumStr = nil
			for _, v := range s.Enum {
				cv, err := canonical(v)
				if err != nil {
					return nil, fmt.Errorf("%s: enum: %v", at, err)
				}
				n.enumJSON = append(n.enumJSON, cv)
			}
		}
	}
	if s.Const != nil {
		n.hasConst = true
		n.constRaw = *s.Const
		if n.constVal, err = canonical(*s.Const); err != nil {
			return nil, fmt.Errorf("%s: const: %v", at, err)
		}
	}
	if s.Minimum != nil {
		n.hasMin, n.min = true, *s.Minimum
	}
	if s.Maximum != nil {
		n.hasMax, n.max = true, *s.Maximum
	}
	if s.ExclusiveMinimum != nil {
		n.hasExMin, n.exMin = true, *s.ExclusiveMinimum
	}
	if s.ExclusiveMaximum != nil {
		n.hasExMax, n.exMax = true, *s.ExclusiveMaximum
	}
	if s.MultipleOf != nil {
		if !(*s.MultipleOf > 0) {
			return nil, fmt.Errorf("%s: multipleOf must be positive", at)
		}
		n.multipleOf = *s.MultipleOf
	}
	if s.MinLength != nil {
		n.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		n.maxLen = *s.MaxLength
	}
	if s.Pattern != "" {
		if n.pattern, err = regexp.Compile(s.Pattern); err != nil {
			return nil, fmt.Errorf("%s: pattern %q: %v", at, s.Pattern, err)
		}
	}

	// Objects: properties in schema order (PropertyOrder first, then the
	// rest sorted), so that the first error is deterministic.
	if len(s.Properties) > 0 {
		names := make([]string, 0, len(s.Properties))
		for _, name := range s.PropertyOrder {
			if _, ok := s.Properties[name]; ok && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		var rest []string
		for name := range s.Properties {
			if !slices.Contains(names, name) {
				rest = append(rest, name)
			}
		}
		slices.Sort(rest)
		names = append(names, rest...)
		for _, name := range names {
			pn, err := c.compile(s.Properties[name], at+"/properties/"+name)
			if err != nil {
				return nil, err
			}
			n.props = append(n.props, prop{name: name, node: pn, required: slices.Contains(s.Required, name)})
		}
	}
	for _, name := range s.Required {
		if !slices.ContainsFunc(n.props, func(p prop) bool { return p.name == name }) {
			n.props = append(n.props, prop{name: name, required: true})
		}
	}
	if len(n.props) > 8 {
		n.propIndex = make(map[string]int, len(n.props))
		for i, p := range n.props {
			n.propIndex[p.name] = i
		}
	}
	if ap := s.AdditionalProperties; ap != nil {
		if isFalseSchema(ap) {
			n.closed = true
		} else if !isEmptySchema(ap) {
			if n.additional, err = c.compile(ap, at+"/additionalProperties"); err != nil {
				return nil, err
			}
		}
	}
	if len(s.PatternProperties) > 0 {
		keys := make([]string, 0, len(s.PatternProperties))
		for k := range s.PatternProperties {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			re, err := regexp.Compile(k)
			if err != nil {
				return nil, fmt.Errorf("%s: patternProperties %q: %v", at, k, err)
			}
			pn, err := c.compile(s.PatternProperties[k], at+"/patternProperties/"+k)
			if err != nil {
				return nil, err
			}
			n.patProps = append(n.patProps, patProp{re: re, node: pn})
		}
	}
	if s.MinProperties != nil {
		n.minProps = *s.MinProperties
	}
	if s.MaxProperties != nil {
		n.maxProps = *s.MaxProperties
	}

	// Arrays.
	prefix, rest := s.PrefixItems, s.Items
	if s.ItemsArray != nil {
		prefix, rest = s.ItemsArray, s.AdditionalItems
	}
	for i, ps := range prefix {
		pn, err := c.compile(ps, at+"/prefixItems/"+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		if pn == nil {
			pn = &node{minLen: -1, maxLen: -1, maxProps: -1, maxItems: -1}
		}
		n.prefix = append(n.prefix, pn)
	}
	if n.items, err = c.compile(rest, at+"/items"); err != nil {
		return nil, err
	}
	if s.MinItems != nil {
		n.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		n.maxItems = *s.MaxItems
	}

	list := func(ss []*jsonschema.Schema, kw string) ([]*node, error) {
		var out []*node
		for i, x := range ss {
			xn, err := c.compile(x, at+"/"+kw+"/"+strconv.Itoa(i))
			if err != nil {
				return nil, err
			}
			if xn == nil {
				xn = &node{minLen: -1, maxLen: -1, maxProps: -1, maxItems: -1}
			}
			out = append(out, xn)
		}
		return out, nil
	}
	if n.allOf, err = list(s.AllOf, "allOf"); err != nil {
		return nil, err
	}
	if n.anyOf, err = list(s.AnyOf, "anyOf"); err != nil {
		return nil, err
	}
	if n.oneOf, err = list(s.OneOf, "oneOf"); err != nil {
		return nil, err
	}
	if s.Ref != "" {
		target, err := c.deref(s.Ref, at)
		if err != nil {
			return nil, err
		}
		if n.ref, err = c.compile(target, s.Ref); err != nil {
			return nil, err
		}
	}
	if s.DynamicRef != "" {
		return nil, fmt.Errorf("%s: $dynamicRef is not supported", at)
	}
	n.applies = n.hasEnum || n.hasConst || n.ref != nil || len(n.allOf) > 0 || len(n.anyOf) > 0 || len(n.oneOf) > 0 || n.not != nil
	n.numChecks = n.hasMin || n.hasMax || n.hasExMin || n.hasExMax || n.multipleOf > 0 || n.hasEnum || n.hasConst
	n.strChecks = n.hasEnum || n.hasConst || n.minLen >= 0 || n.maxLen >= 0 || n.pattern != nil
	return n, nil
}

// deref resolves a local $ref against the root schema.
func (c *compiler) deref(ref, at string) (*jsonschema.Schema, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("%s: $ref %q: only local references (#/...) are supported", at, ref)
	}
	frag := ref[1:]
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	if frag == "" {
		return c.root, nil
	}
	if frag[0] != '/' {
		return nil, fmt.Errorf("%s: $ref %q: anchors are not supported", at, ref)
	}
	cur := c.root
	segs := strings.Split(frag[1:], "/")
	for i := 0; i < len(segs); i++ {
		seg := strings.ReplaceAll(strings.ReplaceAll(segs[i], "~1", "/"), "~0", "~")
		next := func() (string, bool) {
			if i+1 >= len(segs) {
				return "", false
			}
			i++
			return strings.ReplaceAll(strings.ReplaceAll(segs[i], "~1", "/"), "~0", "~"), true
		}
		var nx *jsonschema.Schema
		switch seg {
		case "$defs", "definitions", "properties", "patternProperties", "dependentSchemas":
			key, ok := next()
			if ok {
				m := map[string]map[string]*jsonschema.Schema{
					"$defs": cur.Defs, "definitions": cur.Definitions, "properties": cur.Properties,
					"patternProperties": cur.PatternProperties, "dependentSchemas": cur.DependentSchemas,
				}[seg]
				nx = m[key]
			}
		case "items":
			nx = cur.Items
			if nx == nil && cur.ItemsArray != nil {
				if k, ok := next(); ok {
					if j, err := strconv.Atoi(k); err == nil && j >= 0 && j < len(cur.ItemsArray) {
						nx = cur.ItemsArray[j]
					}
				}
			}
		case "additionalProperties":
			nx = cur.AdditionalProperties
		case "additionalItems":
			nx = cur.AdditionalItems
		case "not":
			nx = cur.Not
		case "prefixItems", "allOf", "anyOf", "oneOf":
			k, ok := next()
			j, err := strconv.Atoi(k)
			if ok && err == nil && j >= 0 {
				l := map[string][]*jsonschema.Schema{"prefixItems": cur.PrefixItems, "allOf": cur.AllOf, "anyOf": cur.AnyOf, "oneOf": cur.OneOf}[seg]
				if j < len(l) {
					nx = l[j]
				}
			}
		}
		if nx == nil {
			return nil, fmt.Errorf("%s: $ref %q does not resolve", at, ref)
		}
		cur = nx
	}
	return cur, nil
}

func isEmptySchema(s *jsonschema.Schema) bool {
	return s != nil && reflect.ValueOf(*s).IsZero()
}

func isFalseSchema(s *jsonschema.Schema) bool {
	if s == nil || s.Not == nil || !isEmptySchema(s.Not) {
		return false
	}
	c := *s
	c.Not = nil
	return reflect.ValueOf(c).IsZero()
}

// canonical returns v as encoding/json would decode its JSON encoding, so
// that schema values and argument values compare alike.
func canonical(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
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
	data := trimSpace(args)
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
	end, e := st.value(v.root, 0)
	if end < 0 {
		return st.syntaxError()
	}
	if end = skipWS(data, end); end != len(data) {
		st.synPos, st.synMsg = end, "unexpected data after the arguments object"
		return st.syntaxError()
	}
	return e
}

func (v *validator) exampleKey() string {
	if v.root != nil && len(v.root.props) > 0 {
		return strconv.Quote(v.root.props[0].name) + ": ..."
	}
	return ""
}

var emptyObject = []byte("{}")

// seg is one step of the path to the value being validated: a key (a span
// of data, still JSON-escaped if esc) or an array index.
type seg struct {
	start, end int32
	index      int32 // -1 for a key
	esc        bool
}

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

// value validates the value at data[pos:] (after optional whitespace)
// against n. It returns the end of the value, or -1 on a syntax error (which
// aborts the whole validation). A schema failure returns a valid end and the
// error, so callers can go on to find an earlier error in schema order.
func (st *vstate) value(n *node, pos int) (int, *sandbox.Error) {
	pos = skipWS(st.data, pos)
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

// fail returns the error make builds, or errQuiet while alternatives are
// being tried (so that a failed alternative costs no formatting).
func (st *vstate) fail(make func() *sandbox.Error) *sandbox.Error {
	if st.quiet > 0 {
		return errQuiet
	}
	return make()
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

func (st *vstate) isIntegral(pos int) bool {
	end, frac := st.scanNumber(pos)
	return end >= 0 && !frac
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

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

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
	i := skipWS(data, pos+1)
	if i < len(data) && data[i] == '}' {
		i++
		goto done
	}
	for {
		i = skipWS(data, i)
		if i >= len(data) || data[i] != '"' {
			return st.syntax(i, "expected a property name"), nil
		}
		ks := i
		ke, esc := st.scanString(i)
		if ke < 0 {
			return -1, nil
		}
		i = skipWS(data, ke)
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
		if idx >= 0 {
			dup := false
			if seenMore != nil {
				dup, seenMore[idx] = seenMore[idx], true
			} else {
				dup = seenBits&(1<<idx) != 0
				seenBits |= 1 << idx
			}
			end, e := st.value(n.props[idx].node, i)
			if end < 0 {
				return -1, nil
			}
			i = end
			if dup && firstErr == nil {
				firstErr = st.duplicateError()
			}
			if e != nil && (bestIdx < 0 || idx < bestIdx) {
				bestIdx, bestErr = idx, e
			}
		} else {
			matched := false
			for _, pp := range n.patProps {
				if (esc && pp.re.MatchString(st.unquote(ks, ke, true))) || (!esc && pp.re.Match(data[ks+1:ke-1])) {
					matched = true
					end, e := st.value(pp.node, i)
					if end < 0 {
						return -1, nil
					}
					if e != nil && extraErr == nil {
						extraErr = e
					}
				}
			}
			end := -1
			switch {
			case matched:
				end = st.skip(i)
			case n.closed:
				end = st.skip(i)
				if firstErr == nil {
					firstErr = st.unknownError(n)
				}
			case n.additional != nil:
				var e *sandbox.Error
				end, e = st.value(n.additional, i)
				if e != nil && extraErr == nil {
					extraErr = e
				}
			default:
				end = st.skip(i)
			}
			if end < 0 {
				return -1, nil
			}
			i = end
		}
		st.pop()
		i = skipWS(data, i)
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
	i := skipWS(data, pos+1)
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
				end = st.skip(skipWS(data, i))
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
			i = skipWS(data, end)
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

// ---- error formatting (slow path) ----

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
