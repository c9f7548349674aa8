package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/pb33f/go-yaml"

	"github.com/sandcall/sandcall/tools/upstream"
)

// Schema conversion. An OpenAPI schema is read from its YAML node (as
// libopenapi parsed it, JSON or YAML alike) and written as a JSON Schema
// (2020-12, as a *jsonschema.Schema) that the tools package validates and the TypeScript
// declarations render:
//
//   - OpenAPI 3.0 and 2.0's nullable (x-nullable) adds "null" to the type
//     (and to an enum), their boolean exclusiveMinimum/exclusiveMaximum
//     become the numeric ones, example becomes examples, 2.0's type file
//     a string;
//   - a $ref to a schema of the spec ("#/components/schemas/Issue",
//     "#/definitions/Pet", or any other pointer in the document) becomes
//     "#/$defs/<name>", and each tool's schema carries, in $defs, the
//     referenced schemas it needs: converted once per source and shared
//     by the tools (read-only);
//   - a $ref to another document is not followed (an open schema, and a
//     lint finding); OpenAPI's own keywords (discriminator, xml,
//     externalDocs, x-*) are dropped, and so is a pattern Go's regular
//     expressions cannot compile (a lint finding);
//   - descriptions are cleaned as upstream descriptions are and capped.

// maxSchemaDepth bounds the nesting of one converted schema (deeper
// subschemas accept anything); the validator allows 64 levels of
// arguments.
const maxSchemaDepth = 48

// maxSchemaText caps a description or title inside a schema.
const maxSchemaText = 1 << 10

// converter converts the schemas of one spec.
type converter struct {
	root   *yaml.Node // the document's mapping
	legacy bool       // OpenAPI 3.0 or Swagger 2.0 schema semantics
	defs   map[string]*def
	keys   map[string]bool // def names taken
	order  []string        // pointers, in the order first referenced
	// notes are problems found while converting, with their lines, for
	// lint.
	notes []note
}

type note struct {
	line int
	rule string
	msg  string
}

// def is one referenced schema of the spec.
type def struct {
	key    string
	node   *yaml.Node
	schema *jsonschema.Schema // nil until converted
	refs   []string           // pointers it refers to
	done   bool
}

func newConverter(root *yaml.Node, legacy bool) *converter {
	for root != nil && root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	return &converter{root: root, legacy: legacy, defs: map[string]*def{}, keys: map[string]bool{}}
}

// convert converts the schema n, appending to refs the pointers of the
// spec's schemas it refers to.
func (c *converter) convert(n *yaml.Node, refs *[]string) *jsonschema.Schema {
	return c.schema(n, 0, refs)
}

// withDefs attaches to s the closure of refs as $defs, converting each
// referenced schema once per source.
func (c *converter) withDefs(s *jsonschema.Schema, refs []string) *jsonschema.Schema {
	if len(refs) == 0 {
		return s
	}
	s.Defs = map[string]*jsonschema.Schema{}
	seen := map[string]bool{}
	for len(refs) > 0 {
		p := refs[len(refs)-1]
		refs = refs[:len(refs)-1]
		if seen[p] {
			continue
		}
		seen[p] = true
		d := c.defs[p]
		if d == nil {
			continue
		}
		if !d.done {
			d.done = true
			if c.refLoop(p) {
				// The validator refuses $refs that lead back to themselves
				// without a schema in between.
				d.schema = &jsonschema.Schema{Description: "A circular reference, with no schema of its own."}
				c.notes = append(c.notes, note{d.node.Line, "openapi-ref", fmt.Sprintf("$ref %s leads back to itself: the schema accepts anything", clip(d.key, 100))})
			} else {
				d.schema = c.convert(d.node, &d.refs)
			}
		}
		s.Defs[d.key] = d.schema
		refs = append(refs, d.refs...)
	}
	return s
}

// The keywords whose value is a schema, a list of schemas, a count or a
// flag, and the field each sets.
var (
	subschema = map[string]func(*jsonschema.Schema) **jsonschema.Schema{
		"additionalProperties":  func(s *jsonschema.Schema) **jsonschema.Schema { return &s.AdditionalProperties },
		"not":                   func(s *jsonschema.Schema) **jsonschema.Schema { return &s.Not },
		"contains":              func(s *jsonschema.Schema) **jsonschema.Schema { return &s.Contains },
		"propertyNames":         func(s *jsonschema.Schema) **jsonschema.Schema { return &s.PropertyNames },
		"if":                    func(s *jsonschema.Schema) **jsonschema.Schema { return &s.If },
		"then":                  func(s *jsonschema.Schema) **jsonschema.Schema { return &s.Then },
		"else":                  func(s *jsonschema.Schema) **jsonschema.Schema { return &s.Else },
		"unevaluatedProperties": func(s *jsonschema.Schema) **jsonschema.Schema { return &s.UnevaluatedProperties },
		"unevaluatedItems":      func(s *jsonschema.Schema) **jsonschema.Schema { return &s.UnevaluatedItems },
	}
	subschemas = map[string]func(*jsonschema.Schema) *[]*jsonschema.Schema{
		"allOf":       func(s *jsonschema.Schema) *[]*jsonschema.Schema { return &s.AllOf },
		"anyOf":       func(s *jsonschema.Schema) *[]*jsonschema.Schema { return &s.AnyOf },
		"oneOf":       func(s *jsonschema.Schema) *[]*jsonschema.Schema { return &s.OneOf },
		"prefixItems": func(s *jsonschema.Schema) *[]*jsonschema.Schema { return &s.PrefixItems },
	}
	counts = map[string]func(*jsonschema.Schema) **int{
		"maxLength":     func(s *jsonschema.Schema) **int { return &s.MaxLength },
		"minLength":     func(s *jsonschema.Schema) **int { return &s.MinLength },
		"maxItems":      func(s *jsonschema.Schema) **int { return &s.MaxItems },
		"minItems":      func(s *jsonschema.Schema) **int { return &s.MinItems },
		"maxProperties": func(s *jsonschema.Schema) **int { return &s.MaxProperties },
		"minProperties": func(s *jsonschema.Schema) **int { return &s.MinProperties },
		"minContains":   func(s *jsonschema.Schema) **int { return &s.MinContains },
		"maxContains":   func(s *jsonschema.Schema) **int { return &s.MaxContains },
	}
	flags = map[string]func(*jsonschema.Schema) *bool{
		"uniqueItems": func(s *jsonschema.Schema) *bool { return &s.UniqueItems },
		"readOnly":    func(s *jsonschema.Schema) *bool { return &s.ReadOnly },
		"writeOnly":   func(s *jsonschema.Schema) *bool { return &s.WriteOnly },
		"deprecated":  func(s *jsonschema.Schema) *bool { return &s.Deprecated },
	}
)

// falseSchema accepts nothing (as jsonschema-go writes false).
func falseSchema() *jsonschema.Schema { return &jsonschema.Schema{Not: &jsonschema.Schema{}} }

// schema converts the OpenAPI schema n.
func (c *converter) schema(n *yaml.Node, depth int, refs *[]string) *jsonschema.Schema {
	n = deref(n)
	if n == nil || depth > maxSchemaDepth {
		return &jsonschema.Schema{}
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
		if n.Value == "false" {
			return falseSchema()
		}
		return &jsonschema.Schema{}
	}
	if n.Kind != yaml.MappingNode {
		return &jsonschema.Schema{}
	}
	var (
		nullable     bool
		exMin, exMax bool
		example      *yaml.Node
		externalRef  string
	)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, deref(n.Content[i+1])
		switch k {
		case "nullable", "x-nullable":
			nullable = c.legacy && isBool(v) && v.Value == "true"
		case "exclusiveMinimum":
			exMin = isBool(v) && v.Value == "true"
		case "exclusiveMaximum":
			exMax = isBool(v) && v.Value == "true"
		case "example":
			example = v
		}
	}
	s := &jsonschema.Schema{}
	list := func(v *yaml.Node) []*jsonschema.Schema {
		if v.Kind != yaml.SequenceNode {
			return nil
		}
		out := make([]*jsonschema.Schema, 0, len(v.Content))
		for _, e := range v.Content {
			out = append(out, c.schema(e, depth+1, refs))
		}
		return out
	}
	props := func(v *yaml.Node) (map[string]*jsonschema.Schema, []string) {
		if v.Kind != yaml.MappingNode {
			return nil, nil
		}
		m := make(map[string]*jsonschema.Schema, len(v.Content)/2)
		order := make([]string, 0, len(v.Content)/2)
		for j := 0; j+1 < len(v.Content); j += 2 {
			name := v.Content[j].Value
			if _, dup := m[name]; !dup {
				order = append(order, name)
			}
			m[name] = c.schema(v.Content[j+1], depth+1, refs)
		}
		return m, order
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, deref(n.Content[i+1])
		if v == nil {
			continue
		}
		if f, ok := subschema[k]; ok {
			*f(s) = c.schema(v, depth+1, refs)
			continue
		}
		if f, ok := subschemas[k]; ok {
			*f(s) = list(v)
			continue
		}
		if f, ok := counts[k]; ok {
			*f(s) = count(v)
			continue
		}
		if f, ok := flags[k]; ok {
			*f(s) = isBool(v) && v.Value == "true"
			continue
		}
		switch k {
		case "$ref":
			ptr, ok := c.refPointer(v.Value)
			if !ok {
				externalRef = v.Value
				c.notes = append(c.notes, note{v.Line, "openapi-ref", fmt.Sprintf("$ref %q is not a local reference: not followed (the schema accepts anything)", clip(v.Value, 100))})
				continue
			}
			d := c.def(ptr)
			if d == nil {
				c.notes = append(c.notes, note{v.Line, "openapi-ref", fmt.Sprintf("$ref %q points at nothing in the spec", clip(v.Value, 100))})
				continue
			}
			*refs = append(*refs, ptr)
			s.Ref = "#/$defs/" + escapeToken(d.key)
		case "type":
			ts := types(v, nullable)
			if len(ts) == 1 {
				s.Type = ts[0]
			} else if len(ts) > 1 {
				s.Types = ts
			}
		case "properties":
			s.Properties, s.PropertyOrder = props(v)
		case "patternProperties":
			s.PatternProperties, _ = props(v)
			for p := range s.PatternProperties {
				if _, err := regexp.Compile(p); err != nil {
					delete(s.PatternProperties, p)
				}
			}
		case "dependentSchemas":
			s.DependentSchemas, _ = props(v)
		case "items":
			if v.Kind == yaml.SequenceNode { // draft-4 tuples
				s.PrefixItems = list(v)
				continue
			}
			s.Items = c.schema(v, depth+1, refs)
		case "enum":
			if v.Kind != yaml.SequenceNode {
				continue
			}
			s.Enum = make([]any, 0, len(v.Content)+1)
			for _, e := range v.Content {
				s.Enum = append(s.Enum, value(e, 0))
			}
			if nullable && !hasNull(v) {
				s.Enum = append(s.Enum, nil)
			}
		case "const":
			x := value(v, 0)
			s.Const = &x
		case "default":
			var w bytes.Buffer
			writeValue(&w, v, 0)
			s.Default = w.Bytes()
		case "examples":
			if v.Kind == yaml.SequenceNode {
				for _, e := range v.Content {
					s.Examples = append(s.Examples, value(e, 0))
				}
			}
		case "description":
			s.Description = upstream.CleanText(v.Value, maxSchemaText)
		case "title":
			s.Title = upstream.CleanText(v.Value, 200)
		case "minimum":
			if f, ok := number(v); ok {
				if exMin {
					s.ExclusiveMinimum = &f
				} else {
					s.Minimum = &f
				}
			}
		case "maximum":
			if f, ok := number(v); ok {
				if exMax {
					s.ExclusiveMaximum = &f
				} else {
					s.Maximum = &f
				}
			}
		case "exclusiveMinimum":
			if f, ok := number(v); ok {
				s.ExclusiveMinimum = &f
			}
		case "exclusiveMaximum":
			if f, ok := number(v); ok {
				s.ExclusiveMaximum = &f
			}
		case "multipleOf":
			if f, ok := number(v); ok && f > 0 {
				s.MultipleOf = &f
			}
		case "format":
			if v.Kind == yaml.ScalarNode {
				s.Format = clip(v.Value, 200)
			}
		case "contentEncoding":
			if v.Kind == yaml.ScalarNode {
				s.ContentEncoding = clip(v.Value, 200)
			}
		case "contentMediaType":
			if v.Kind == yaml.ScalarNode {
				s.ContentMediaType = clip(v.Value, 200)
			}
		case "pattern":
			if v.Kind != yaml.ScalarNode {
				continue
			}
			if _, err := regexp.Compile(v.Value); err != nil {
				c.notes = append(c.notes, note{v.Line, "openapi-pattern", fmt.Sprintf("pattern %q is not a Go (RE2) regular expression: not checked", clip(v.Value, 60))})
				continue
			}
			s.Pattern = v.Value
		case "required":
			if v.Kind != yaml.SequenceNode {
				continue
			}
			seen := map[string]bool{}
			for _, e := range v.Content {
				if e = deref(e); e != nil && e.Kind == yaml.ScalarNode && !seen[e.Value] {
					seen[e.Value] = true
					s.Required = append(s.Required, e.Value)
				}
			}
		}
	}
	if externalRef != "" {
		d := "Described in " + clip(externalRef, 100) + " (not read)."
		if s.Description != "" {
			d = s.Description + " " + d
		}
		s.Description = d
	}
	if example != nil && len(s.Examples) == 0 {
		s.Examples = []any{value(example, 0)}
	}
	return s
}

// types reads a type keyword: 2.0's file is a string; nullable adds
// "null"; unknown names are dropped.
func types(v *yaml.Node, nullable bool) []string {
	var ts []string
	switch v.Kind {
	case yaml.ScalarNode:
		ts = []string{v.Value}
	case yaml.SequenceNode:
		for _, e := range v.Content {
			if e = deref(e); e != nil && e.Kind == yaml.ScalarNode {
				ts = append(ts, e.Value)
			}
		}
	}
	out := make([]string, 0, len(ts)+1)
	for _, t := range ts {
		if t == "file" {
			t = "string"
		}
		switch t {
		case "string", "number", "integer", "boolean", "object", "array", "null":
		default:
			continue
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if nullable && len(out) > 0 && !slices.Contains(out, "null") {
		out = append(out, "null")
	}
	return out
}

// number reads a numeric keyword.
func number(n *yaml.Node) (float64, bool) {
	if !isNumber(n) {
		return 0, false
	}
	t, _ := jsonNumber(n.Value)
	f, err := strconv.ParseFloat(t, 64)
	return f, err == nil
}

// count reads a non-negative integer keyword.
func count(n *yaml.Node) *int {
	f, ok := number(n)
	if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return nil
	}
	i := int(f)
	return &i
}

// value is a YAML value as JSON data (what json.Unmarshal into any
// gives: numbers as float64).
func value(n *yaml.Node, depth int) any {
	n = deref(n)
	if n == nil || depth > 64 {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = value(n.Content[i+1], depth+1)
		}
		return m
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			a = append(a, value(e, depth+1))
		}
		return a
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil
		case "!!bool":
			return strings.EqualFold(n.Value, "true")
		case "!!int", "!!float":
			if f, ok := number(n); ok {
				return f
			}
		}
		return n.Value
	}
	return nil
}

// refLoop reports whether the schema at ptr is a chain of plain $refs
// that comes back to one of its links.
func (c *converter) refLoop(ptr string) bool {
	seen := map[string]bool{ptr: true}
	n := lookup(c.root, ptr)
	for n != nil {
		ref, ok := plainRef(n)
		if !ok {
			return false
		}
		next, ok := c.refPointer(ref)
		if !ok {
			return false
		}
		if seen[next] {
			return true
		}
		seen[next] = true
		n = lookup(c.root, next)
	}
	return false
}

// plainRef returns the $ref of a schema that is nothing else (annotations
// and extensions aside).
func plainRef(n *yaml.Node) (string, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return "", false
	}
	ref := ""
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i].Value; k {
		case "$ref":
			if v := deref(n.Content[i+1]); v != nil {
				ref = v.Value
			}
		case "description", "title", "example", "examples", "default", "deprecated", "readOnly", "writeOnly",
			"$comment", "format", "nullable", "x-nullable":
		default:
			if !strings.HasPrefix(k, "x-") {
				return "", false
			}
		}
	}
	return ref, ref != ""
}

// refPointer returns the JSON pointer of a local $ref ("#/a/b"), decoded
// from its URI fragment form.
func (c *converter) refPointer(ref string) (string, bool) {
	if !strings.HasPrefix(ref, "#") {
		return "", false
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		frag = ref[1:]
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return "", false // an anchor: not supported
	}
	return frag, true
}

// def returns the def of the schema at ptr, registering it on first use;
// nil when ptr points at nothing.
func (c *converter) def(ptr string) *def {
	if d, ok := c.defs[ptr]; ok {
		return d
	}
	n := lookup(c.root, ptr)
	if n == nil {
		c.defs[ptr] = nil
		return nil
	}
	toks := splitPointer(ptr)
	name := "root"
	switch {
	case len(toks) == 3 && toks[0] == "components" && toks[1] == "schemas",
		len(toks) == 2 && toks[0] == "definitions":
		name = toks[len(toks)-1]
	case len(toks) > 0:
		name = strings.Join(toks, ".")
	}
	key := name
	for i := 2; c.keys[key]; i++ {
		key = name + "_" + strconv.Itoa(i)
	}
	c.keys[key] = true
	d := &def{key: key, node: n}
	c.defs[ptr] = d
	c.order = append(c.order, ptr)
	return d
}

// lookup resolves a JSON pointer in the document.
func lookup(root *yaml.Node, ptr string) *yaml.Node {
	n := root
	for _, tok := range splitPointer(ptr) {
		n = deref(n)
		if n == nil {
			return nil
		}
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == tok {
					next = n.Content[i+1]
					break
				}
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		default:
			return nil
		}
	}
	return deref(n)
}

func splitPointer(ptr string) []string {
	if ptr == "" {
		return nil
	}
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// deref follows YAML aliases (bounded).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

func isBool(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool"
}

func isNumber(n *yaml.Node) bool {
	if n == nil || n.Kind != yaml.ScalarNode {
		return false
	}
	t := n.ShortTag()
	if t != "!!int" && t != "!!float" {
		return false
	}
	_, ok := jsonNumber(n.Value)
	return ok
}

func hasNull(seq *yaml.Node) bool {
	for _, e := range seq.Content {
		if e = deref(e); e != nil && e.Kind == yaml.ScalarNode && e.ShortTag() == "!!null" {
			return true
		}
	}
	return false
}

// jsonNumber returns a YAML number as JSON number text.
func jsonNumber(v string) (string, bool) {
	v = strings.ReplaceAll(v, "_", "")
	if json.Valid([]byte(v)) && v != "" && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		return v, true
	}
	if i, err := strconv.ParseInt(v, 0, 64); err == nil {
		return strconv.FormatInt(i, 10), true
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, 64), true
	}
	return "", false
}

// writeValue writes a YAML value as JSON data (enum members, defaults,
// examples).
func writeValue(w *bytes.Buffer, n *yaml.Node, depth int) {
	n = deref(n)
	if n == nil || depth > 64 {
		w.WriteString("null")
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		w.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				w.WriteByte(',')
			}
			writeString(w, n.Content[i].Value)
			w.WriteByte(':')
			writeValue(w, n.Content[i+1], depth+1)
		}
		w.WriteByte('}')
	case yaml.SequenceNode:
		w.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				w.WriteByte(',')
			}
			writeValue(w, e, depth+1)
		}
		w.WriteByte(']')
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			w.WriteString("null")
		case "!!bool":
			if strings.EqualFold(n.Value, "true") {
				w.WriteString("true")
			} else {
				w.WriteString("false")
			}
		case "!!int", "!!float":
			if num, ok := jsonNumber(n.Value); ok {
				w.WriteString(num)
			} else {
				writeString(w, n.Value)
			}
		default:
			writeString(w, n.Value)
		}
	default:
		w.WriteString("null")
	}
}

func writeString(w *bytes.Buffer, s string) {
	b, _ := json.Marshal(s)
	w.Write(b)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
