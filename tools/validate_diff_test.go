package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// FuzzValidateDifferential feeds a schema and an instance to the validator
// and to jsonschema-go: they must agree on validity wherever both accept the
// schema. The instance is first normalized through encoding/json (numbers
// as Go writes them, no duplicate keys, valid UTF-8), which removes the
// deviations the validator makes on purpose (1.0 is not an integer for tool
// arguments; duplicate declared keys, bad UTF-8 and deep nesting are
// refused before the schema), so that any disagreement left is a bug.
func FuzzValidateDifferential(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"properties":{"foo":{"type":"array","maxItems":3}},"patternProperties":{"f.o":{"minItems":2}},"additionalProperties":{"type":"integer"}}`, `{"foo":[1]}`},
		{`{"properties":{"foo":{}},"required":["bar"],"additionalProperties":false}`, `{"foo":1,"bar":2}`},
		{`{"type":"object","properties":{"a":{"type":"integer","minimum":1}},"required":["a"]}`, `{"a":0}`},
		{`{"oneOf":[{"type":"integer"},{"minimum":2}]}`, `3`},
		{`{"anyOf":[{"type":"string","maxLength":2},{"type":"null"}]}`, `"abc"`},
		{`{"not":{"enum":[1,"a",null]}}`, `"a"`},
		{`{"prefixItems":[{"type":"string"}],"items":{"type":"number"},"minItems":1}`, `["a",1,2.5]`},
		{`{"$defs":{"n":{"type":"number","multipleOf":0.5}},"properties":{"x":{"$ref":"#/$defs/n"}}}`, `{"x":1.25}`},
		{`{"const":{"a":[1,2]}}`, `{"a":[1,2]}`},
		{`{"uniqueItems":true}`, `[1,1]`},
		{`{"if":{"minimum":10},"then":{"multipleOf":2},"else":{"maximum":0}}`, `5`},
		{`{"patternProperties":{"^a":{"type":"string"}},"minProperties":1,"maxProperties":2}`, `{"ab":"x","ac":1}`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, schema, data string) {
		var s jsonschema.Schema
		if json.Unmarshal([]byte(schema), &s) != nil {
			return
		}
		var other jsonschema.Schema
		_ = json.Unmarshal([]byte(schema), &other) // an independent copy: compiling may not share state
		rs, err := other.Resolve(nil)
		if err != nil {
			return
		}
		v, err := compileValidator(&s)
		if err != nil {
			return // refused at add time: never weakened
		}
		var inst any
		if json.Unmarshal([]byte(data), &inst) != nil {
			return
		}
		norm, err := json.Marshal(inst)
		if err != nil || hasExponent(norm) {
			return // 1e+21 and up: an integer to jsonschema-go, written with an exponent
		}
		e := v.validateValue(norm)
		if e != nil && strings.Contains(e.Message, "nest more than") {
			return
		}
		got, want := e == nil, rs.Validate(inst) == nil
		if got != want {
			t.Fatalf("schema %s, instance %s: valid = %v, jsonschema-go says %v (%v)", schema, norm, got, want, e)
		}
	})
}

// hasExponent reports whether a number in JSON text is written with an
// exponent (outside strings).
func hasExponent(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == 'e' || c == 'E'):
			return true
		}
	}
	return false
}
