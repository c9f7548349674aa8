package tools

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// ParseSchema decodes a JSON Schema document, keeping the order in which
// each "properties" object lists its properties (as PropertyOrder), which
// jsonschema.Schema's own decoding loses. The order matters: argument errors
// are reported for the first failing property in schema order, and
// listings and TypeScript declarations show properties in that order. Use it
// for schemas that come as JSON (local tools, upstream MCP servers).
func ParseSchema(data []byte) (*jsonschema.Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	recordOrder(&s, data, 0)
	return &s, nil
}

// recordOrder sets PropertyOrder in s and its subschemas from raw, the JSON
// s was decoded from. Errors cannot happen (raw decoded once already) and
// are ignored: at worst an order is missing.
func recordOrder(s *jsonschema.Schema, raw []byte, depth int) {
	if s == nil || depth > 64 || len(raw) == 0 || raw[0] != '{' {
		return
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return
	}
	sub := func(ss *jsonschema.Schema, key string) {
		if r, ok := fields[key]; ok {
			recordOrder(ss, r, depth+1)
		}
	}
	each := func(m map[string]*jsonschema.Schema, key string) {
		r, ok := fields[key]
		if !ok {
			return
		}
		var rm map[string]json.RawMessage
		if json.Unmarshal(r, &rm) != nil {
			return
		}
		for k, ss := range m {
			recordOrder(ss, rm[k], depth+1)
		}
	}
	list := func(l []*jsonschema.Schema, key string) {
		r, ok := fields[key]
		if !ok {
			return
		}
		var rl []json.RawMessage
		if json.Unmarshal(r, &rl) != nil {
			return
		}
		for i, ss := range l {
			if i < len(rl) {
				recordOrder(ss, rl[i], depth+1)
			}
		}
	}
	if r, ok := fields["properties"]; ok && len(s.Properties) > 0 {
		s.PropertyOrder = objectKeys(r)
	}
	each(s.Properties, "properties")
	each(s.Defs, "$defs")
	each(s.Definitions, "definitions")
	each(s.PatternProperties, "patternProperties")
	sub(s.AdditionalProperties, "additionalProperties")
	sub(s.Items, "items")
	list(s.ItemsArray, "items")
	list(s.PrefixItems, "prefixItems")
	list(s.AllOf, "allOf")
	list(s.AnyOf, "anyOf")
	list(s.OneOf, "oneOf")
	sub(s.Not, "not")
}

// objectKeys returns the keys of a JSON object in document order, without
// duplicates.
func objectKeys(raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, ok := t.(string)
		if !ok {
			return keys
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

// IsTrueSchema reports whether s is the schema true: {} up to annotations
// (title, description, $comment, examples, default, deprecated, readOnly,
// writeOnly, property order, unknown keywords). A nil s is no schema, not
// true.
func IsTrueSchema(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	c := *s
	c.Description, c.Title, c.Comment, c.Examples, c.Default, c.Deprecated = "", "", "", nil, nil, false
	c.PropertyOrder, c.Extra, c.ReadOnly, c.WriteOnly = nil, nil, false, false
	return reflect.ValueOf(c).IsZero()
}

// IsFalseSchema reports whether s is the schema false, which accepts
// nothing: {"not": {}} up to annotations (as jsonschema-go writes false).
// The validator, the TypeScript declarations and the linter all ask this
// one function.
func IsFalseSchema(s *jsonschema.Schema) bool {
	if s == nil || !IsTrueSchema(s.Not) {
		return false
	}
	c := *s
	c.Not = nil
	return IsTrueSchema(&c)
}
