package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/sandbox"
)

// Schemas beyond the subset.
//
// The fast validator implements a subset of JSON Schema (see validate.go).
// A schema that uses any keyword outside it is not weakened by ignoring the
// keyword: it is resolved with jsonschema-go, which then decides validity,
// while the fast walker still checks what is not the schema's business
// (one JSON object, valid UTF-8, nesting). Such a schema costs a decode and
// jsonschema-go's walk per call (RATIONALE.md, "Why does sandcall validate tool
// arguments itself, and hand some schemas to jsonschema-go?"), and `sandcall tools lint` warns about it.

// errBeyondSubset marks a compile error caused by a construct the subset
// does not have (an anchor, an embedded resource): the schema goes to
// jsonschema-go instead.
var errBeyondSubset = errors.New("beyond the subset")

// BeyondSubset returns the first keyword of s (depth first, with its
// location) that the fast validator does not implement, or "" when it
// implements all of them. Validation of such a schema is decided by
// jsonschema-go.
func BeyondSubset(s *jsonschema.Schema) string {
	kw := ""
	seen := map[*jsonschema.Schema]bool{}
	var walk func(s *jsonschema.Schema, at string)
	walk = func(s *jsonschema.Schema, at string) {
		if s == nil || kw != "" || seen[s] {
			return
		}
		seen[s] = true
		if k := beyondHere(s, at == "#"); k != "" {
			kw = at + ": " + k
			return
		}
		for _, c := range children(s) {
			walk(c.s, at+"/"+c.at)
		}
	}
	walk(s, "#")
	return kw
}

// beyondHere names a keyword of s itself outside the subset.
func beyondHere(s *jsonschema.Schema, root bool) string {
	switch {
	case s.UniqueItems:
		return "uniqueItems"
	case s.Contains != nil || s.MinContains != nil || s.MaxContains != nil:
		return "contains"
	case s.If != nil || s.Then != nil || s.Else != nil:
		return "if/then/else"
	case s.DependentRequired != nil || s.DependencyStrings != nil:
		return "dependentRequired"
	case s.DependentSchemas != nil || s.DependencySchemas != nil:
		return "dependentSchemas"
	case s.PropertyNames != nil:
		return "propertyNames"
	case s.UnevaluatedItems != nil:
		return "unevaluatedItems"
	case s.UnevaluatedProperties != nil:
		return "unevaluatedProperties"
	case s.Anchor != "":
		return "$anchor"
	case s.DynamicAnchor != "" || s.DynamicRef != "":
		return "$dynamicRef"
	case s.ID != "" && !root:
		return "$id" // an embedded resource changes what its $refs mean
	case s.Ref != "" && !strings.HasPrefix(s.Ref, "#/") && s.Ref != "#":
		return "$ref " + s.Ref // an anchor, or relative to an $id
	case s.ID != "" && s.Ref != "":
		return "$id"
	}
	return ""
}

type child struct {
	s  *jsonschema.Schema
	at string
}

// children lists the subschemas of s, in a fixed order.
func children(s *jsonschema.Schema) []child {
	var out []child
	one := func(c *jsonschema.Schema, at string) {
		if c != nil {
			out = append(out, child{c, at})
		}
	}
	list := func(cs []*jsonschema.Schema, at string) {
		for i, c := range cs {
			one(c, fmt.Sprintf("%s/%d", at, i))
		}
	}
	dict := func(m map[string]*jsonschema.Schema, at string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			one(m[k], at+"/"+k)
		}
	}
	dict(s.Defs, "$defs")
	dict(s.Definitions, "definitions")
	dict(s.Properties, "properties")
	dict(s.PatternProperties, "patternProperties")
	dict(s.DependentSchemas, "dependentSchemas")
	dict(s.DependencySchemas, "dependencies")
	one(s.AdditionalProperties, "additionalProperties")
	one(s.PropertyNames, "propertyNames")
	one(s.UnevaluatedProperties, "unevaluatedProperties")
	list(s.PrefixItems, "prefixItems")
	one(s.Items, "items")
	list(s.ItemsArray, "items")
	one(s.AdditionalItems, "additionalItems")
	one(s.Contains, "contains")
	one(s.UnevaluatedItems, "unevaluatedItems")
	list(s.AllOf, "allOf")
	list(s.AnyOf, "anyOf")
	list(s.OneOf, "oneOf")
	one(s.Not, "not")
	one(s.If, "if")
	one(s.Then, "then")
	one(s.Else, "else")
	one(s.ContentSchema, "contentSchema")
	return out
}

// compileFull resolves a schema beyond the subset with jsonschema-go. Its
// fast walker only accepts any value, for the checks that are not the
// schema's (syntax, UTF-8, nesting).
func compileFull(s *jsonschema.Schema, why string) (*validator, error) {
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", why, err)
	}
	return &validator{root: anyNode(), full: rs, beyond: why}, nil
}

// anyNode is the schema {}.
func anyNode() *node { return &node{minLen: -1, maxLen: -1, maxProps: -1, maxItems: -1} }

// validateFull decodes data (already checked by the walker) and lets
// jsonschema-go decide.
func (v *validator) validateFull(data []byte) *sandbox.Error {
	var inst any
	if err := json.Unmarshal(data, &inst); err != nil {
		return &sandbox.Error{Code: sandbox.EToolArgs, Message: "arguments are not valid JSON", Hint: "Send one JSON value."}
	}
	if reflect.TypeOf(inst) == nil {
		inst = nil
	}
	if err := v.full.Validate(inst); err != nil {
		return &sandbox.Error{
			Code:    sandbox.EToolArgs,
			Message: "arguments do not match the input schema: " + sandbox.Cap(strings.TrimPrefix(err.Error(), "validating root: "), 300),
			Hint:    "Read the tool's input schema (describe_tools) and change the arguments to match it.",
		}
	}
	return nil
}
