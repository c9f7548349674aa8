package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/jsonscan"
)

func mustSchema(t testing.TB, js string) *jsonschema.Schema {
	t.Helper()
	s, err := ParseSchema([]byte(js))
	if err != nil {
		t.Fatalf("schema %s: %v", js, err)
	}
	return s
}

func toolWith(t testing.TB, schema string) *Tool {
	t.Helper()
	tool := &Tool{Name: "t", InputSchema: mustSchema(t, schema), Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	}}
	c, err := NewCatalog(tool)
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	got, _ := c.Lookup("t")
	return got
}

const expenseSchema = `{
	"type": "object",
	"properties": {
		"member_id": {"type": "string", "minLength": 1, "maxLength": 8},
		"quarter": {"type": "string", "enum": ["Q1", "Q2", "Q3", "Q4"]},
		"limit": {"type": "integer", "minimum": 1, "maximum": 100},
		"ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
		"tags": {"type": ["array", "null"], "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2},
		"code": {"type": "string", "pattern": "^[A-Z]{3}$"},
		"flag": {"type": "boolean"},
		"filter": {"type": "object", "properties": {"level": {"type": "string", "enum": ["L1", "L2"]}}, "additionalProperties": false}
	},
	"required": ["member_id", "quarter"],
	"additionalProperties": false
}`

func TestValidate(t *testing.T) {
	tool := toolWith(t, expenseSchema)
	tests := []struct {
		args    string
		path    string // "" with ok
		ok      bool
		msg     string // exact message, if set
		allowed []any
		hint    string // substring of the hint, if set
	}{
		{args: `{"member_id":"ENG-001","quarter":"Q3"}`, ok: true},
		{args: ` {"quarter":"Q3" , "member_id":"ENG-001"} `, ok: true},
		{args: `{"member_id":"ENG-001","quarter":"Q3","limit":100,"ratio":0.5,"tags":["a","b"],"code":"ABC","flag":false,"filter":{"level":"L2"}}`, ok: true},
		{args: `{"member_id":"ENG-001","quarter":"Q3","tags":null,"filter":{}}`, ok: true},
		{args: `{"member_id":"\u00e9","quarter":"Q3"}`, ok: true},
		{args: `{"member_id":"ENG-001","quarter":"Q9"}`, path: "/quarter",
			msg: `argument "quarter": "Q9" is not one of the allowed values`, allowed: []any{"Q1", "Q2", "Q3", "Q4"}, hint: `Use one of: "Q1", "Q2", "Q3", "Q4".`},
		{args: `{"member_id":"ENG-001","quarter":"q3"}`, path: "/quarter", hint: `Did you mean "Q3"?`},
		{args: `{"member_id":"ENG-001"}`, path: "/quarter", msg: `missing required argument "quarter"`, allowed: []any{"Q1", "Q2", "Q3", "Q4"}},
		{args: `{}`, path: "/member_id", msg: `missing required argument "member_id"`},
		{args: `null`, path: "/member_id"},
		{args: ``, path: "/member_id"},
		{args: `{"member":"ENG-001","quarter":"Q3"}`, path: "/member", msg: `unknown argument "member"`, hint: `Did you mean "member_id"?`},
		{args: `{"member_id":"ENG-001","quarter":"Q3","zzzzzz":1}`, path: "/zzzzzz", hint: "Known arguments: member_id, quarter"},
		{args: `{"member_id":"ENG-001","quarter":"Q3","member_id":"X"}`, path: "/member_id", msg: `argument "member_id" is given more than once`},
		{args: `{"member_id":"","quarter":"Q3"}`, path: "/member_id"},
		{args: `{"member_id":"123456789","quarter":"Q3"}`, path: "/member_id", msg: `argument "member_id": a string of 9 characters is longer than the maximum of 8`},
		{args: `{"member_id":"ééééééé","quarter":"Q3"}`, ok: true}, // 7 characters, 14 bytes
		{args: `{"member_id":5,"quarter":"Q3"}`, path: "/member_id", msg: `argument "member_id": expected a string, got integer 5`},
		{args: `{"member_id":"E","quarter":"Q3","limit":"5"}`, path: "/limit", hint: "Numbers go without quotes."},
		{args: `{"member_id":"E","quarter":"Q3","limit":1.5}`, path: "/limit", msg: `argument "limit": expected an integer, got number 1.5`},
		{args: `{"member_id":"E","quarter":"Q3","limit":1.0}`, path: "/limit"},
		{args: `{"member_id":"E","quarter":"Q3","limit":0}`, path: "/limit", msg: `argument "limit": 0 is less than the minimum of 1`},
		{args: `{"member_id":"E","quarter":"Q3","limit":101}`, path: "/limit"},
		{args: `{"member_id":"E","quarter":"Q3","limit":99999999999999999999999}`, path: "/limit"},
		{args: `{"member_id":"E","quarter":"Q3","ratio":1}`, path: "/ratio"},
		{args: `{"member_id":"E","quarter":"Q3","ratio":0}`, path: "/ratio"},
		{args: `{"member_id":"E","quarter":"Q3","ratio":1e-3}`, ok: true},
		{args: `{"member_id":"E","quarter":"Q3","tags":["a","c"]}`, path: "/tags/1", msg: `argument "tags[1]": "c" is not one of the allowed values`},
		{args: `{"member_id":"E","quarter":"Q3","tags":["a","a","b"]}`, path: "/tags"},
		{args: `{"member_id":"E","quarter":"Q3","tags":"a"}`, path: "/tags", msg: `argument "tags": expected an array or null, got string "a"`},
		{args: `{"member_id":"E","quarter":"Q3","code":"abc"}`, path: "/code"},
		{args: `{"member_id":"E","quarter":"Q3","flag":"true"}`, path: "/flag"},
		{args: `{"member_id":"E","quarter":"Q3","filter":{"level":"L3"}}`, path: "/filter/level", msg: `argument "filter.level": "L3" is not one of the allowed values`},
		{args: `{"member_id":"E","quarter":"Q3","filter":{"levl":"L1"}}`, path: "/filter/levl", msg: `unknown argument "filter.levl"`, hint: `Did you mean "level"?`},
		// Not an object, or not JSON.
		{args: `[]`, path: "", msg: "arguments must be a JSON object, got array"},
		{args: `"x"`, path: "", msg: "arguments must be a JSON object, got string"},
		{args: `{"member_id":"E","quarter":"Q3"`, path: ""},
		{args: `{"member_id":"E","quarter":"Q3"} {}`, path: ""},
		{args: `{"member_id":"E","quarter":"Q3",}`, path: ""},
		{args: `{"member_id":"E\x01","quarter":"Q3"}`, path: ""},
		{args: "{\"member_id\":\"E\xff\",\"quarter\":\"Q3\"}", path: ""},
		{args: `{"member_id":"E","quarter":"Q3","limit":01}`, path: ""},
		{args: `{"member_id":"E","quarter":"Q3","limit":-}`, path: ""},
		{args: `{"member_id":"E","quarter":"Q3","flag":tru}`, path: ""},
		{args: `{"member_id":"E","quarter":"Q3","x":[1,2,{"a":[nul]}]}`, path: ""},
		{args: `{'member_id':"E"}`, path: ""},
		// Escapes in keys and values are decoded before comparing.
		{args: `{"member\u005fid":"E","quarter":"Q\u0033"}`, ok: true},
	}
	for _, tt := range tests {
		err := tool.Validate(json.RawMessage(tt.args))
		if tt.ok {
			if err != nil {
				t.Errorf("Validate(%s) = %v, want nil", tt.args, err)
			}
			continue
		}
		var e *sandbox.Error
		if !errors.As(err, &e) {
			t.Errorf("Validate(%s) = %v, want *sandbox.Error", tt.args, err)
			continue
		}
		if !errors.Is(err, sandbox.ErrToolArgs) || e.Tool != "t" {
			t.Errorf("Validate(%s) = %+v, want E_TOOL_ARGS for tool t", tt.args, e)
		}
		if e.Path != tt.path {
			t.Errorf("Validate(%s).Path = %q, want %q (%v)", tt.args, e.Path, tt.path, e)
		}
		if tt.msg != "" && e.Message != tt.msg {
			t.Errorf("Validate(%s).Message = %q, want %q", tt.args, e.Message, tt.msg)
		}
		if tt.hint != "" && !strings.Contains(e.Hint, tt.hint) {
			t.Errorf("Validate(%s).Hint = %q, want it to contain %q", tt.args, e.Hint, tt.hint)
		}
		if tt.allowed != nil && !slices.Equal(e.AllowedValues, tt.allowed) {
			t.Errorf("Validate(%s).AllowedValues = %v, want %v", tt.args, e.AllowedValues, tt.allowed)
		}
		if e.Hint == "" {
			t.Errorf("Validate(%s): no hint (%s)", tt.args, e.Message)
		}
	}
}

// The first error is the first in schema order, whatever the order of the
// arguments; unknown arguments come before everything else.
func TestValidateOrder(t *testing.T) {
	tool := toolWith(t, expenseSchema)
	tests := []struct{ args, path string }{
		{`{"quarter":"Q9","member_id":5}`, "/member_id"},
		{`{"member_id":5,"quarter":"Q9"}`, "/member_id"},
		{`{"flag":1,"limit":0}`, "/member_id"}, // missing member_id comes first in schema order
		{`{"member_id":"E","flag":1,"limit":0}`, "/quarter"},
		{`{"member_id":"E","quarter":"Q1","flag":1,"limit":0}`, "/limit"},
		{`{"limit":0,"nope":1,"member_id":"E","quarter":"Q1"}`, "/nope"},
	}
	for _, tt := range tests {
		for range 3 { // deterministic
			var e *sandbox.Error
			if err := tool.Validate(json.RawMessage(tt.args)); !errors.As(err, &e) || e.Path != tt.path {
				t.Errorf("Validate(%s) = %v (path %q), want path %q", tt.args, err, e.Path, tt.path)
			}
		}
	}
}

func TestValidateKeywords(t *testing.T) {
	tests := []struct {
		name, schema string
		valid        []string
		invalid      map[string]string // args → path
	}{
		{
			name:   "nil schema is an empty closed object",
			schema: ``,
			valid:  []string{`{}`, `null`, ``},
			invalid: map[string]string{
				`{"a":1}`: "/a",
			},
		},
		{
			name:   "open object",
			schema: `{"type":"object","properties":{"a":{"type":"integer"}}}`,
			valid:  []string{`{}`, `{"a":1,"b":"x"}`, `{"b":{"c":[1,2,3]}}`},
			invalid: map[string]string{
				`{"a":"x"}`: "/a",
			},
		},
		{
			name:   "additionalProperties schema",
			schema: `{"type":"object","additionalProperties":{"type":"number"}}`,
			valid:  []string{`{}`, `{"x":1,"y":2.5}`},
			invalid: map[string]string{
				`{"x":1,"y":"2"}`: "/y",
			},
		},
		{
			name:   "patternProperties",
			schema: `{"type":"object","patternProperties":{"^n_":{"type":"integer"}},"additionalProperties":false}`,
			valid:  []string{`{"n_a":1}`},
			invalid: map[string]string{
				`{"n_a":"x"}`: "/n_a",
				`{"m":1}`:     "/m",
			},
		},
		{
			name:   "nullable via type list",
			schema: `{"type":"object","properties":{"a":{"type":["string","null"]}},"required":["a"]}`,
			valid:  []string{`{"a":null}`, `{"a":"x"}`},
			invalid: map[string]string{
				`{"a":1}`: "/a",
				`{}`:      "/a",
			},
		},
		{
			name:   "const",
			schema: `{"type":"object","properties":{"a":{"const":{"k":[1,"x"]}},"b":{"const":3}}}`,
			valid:  []string{`{"a":{"k":[1,"x"]}}`, `{"a":{"k":[1.0,"x"]}}`, `{"b":3}`},
			invalid: map[string]string{
				`{"a":{"k":[1,"y"]}}`: "/a",
				`{"b":4}`:             "/b",
				`{"b":"3"}`:           "/b",
			},
		},
		{
			name:   "enum of mixed values",
			schema: `{"type":"object","properties":{"a":{"enum":[1,"one",true,null,[1]]}}}`,
			valid:  []string{`{"a":1}`, `{"a":"one"}`, `{"a":true}`, `{"a":null}`, `{"a":[1]}`},
			invalid: map[string]string{
				`{"a":2}`:     "/a",
				`{"a":false}`: "/a",
				`{"a":[2]}`:   "/a",
				`{"a":{}}`:    "/a",
			},
		},
		{
			name:   "multipleOf",
			schema: `{"type":"object","properties":{"a":{"type":"number","multipleOf":0.01}}}`,
			valid:  []string{`{"a":1.23}`, `{"a":5}`},
			invalid: map[string]string{
				`{"a":1.234}`: "/a",
			},
		},
		{
			name:   "prefixItems and items",
			schema: `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":{"type":"boolean"},"minItems":1}}}`,
			valid:  []string{`{"p":["a"]}`, `{"p":["a",1,true,false]}`},
			invalid: map[string]string{
				`{"p":[]}`:          "/p",
				`{"p":[1]}`:         "/p/0",
				`{"p":["a",1,2]}`:   "/p/2",
				`{"p":["a","b",3]}`: "/p/1",
			},
		},
		{
			name:   "anyOf",
			schema: `{"type":"object","properties":{"a":{"anyOf":[{"type":"string","maxLength":2},{"type":"integer","minimum":10}]}}}`,
			valid:  []string{`{"a":"ab"}`, `{"a":10}`},
			invalid: map[string]string{
				`{"a":"abc"}`: "/a",
				`{"a":5}`:     "/a",
				`{"a":true}`:  "/a",
			},
		},
		{
			name:   "oneOf",
			schema: `{"type":"object","properties":{"a":{"oneOf":[{"type":"integer"},{"type":"number","minimum":5}]}}}`,
			valid:  []string{`{"a":1}`, `{"a":5.5}`},
			invalid: map[string]string{
				`{"a":6}`:   "/a", // matches both
				`{"a":"x"}`: "/a",
			},
		},
		{
			name:   "allOf and not",
			schema: `{"type":"object","properties":{"a":{"allOf":[{"type":"string"},{"minLength":2}],"not":{"const":"no"}}}}`,
			valid:  []string{`{"a":"yes"}`},
			invalid: map[string]string{
				`{"a":"y"}`:  "/a",
				`{"a":"no"}`: "/a",
				`{"a":1}`:    "/a",
			},
		},
		{
			name:   "$ref and $defs, recursive",
			schema: `{"type":"object","properties":{"tree":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v"],"additionalProperties":false}}}`,
			valid:  []string{`{"tree":{"v":1}}`, `{"tree":{"v":1,"kids":[{"v":2,"kids":[{"v":3}]}]}}`},
			invalid: map[string]string{
				`{"tree":{"v":1,"kids":[{"v":2,"kids":[{"v":"3"}]}]}}`: "/tree/kids/0/kids/0/v",
				`{"tree":{"v":1,"kids":[{}]}}`:                         "/tree/kids/0/v",
			},
		},
		{
			name:   "deep paths",
			schema: `{"type":"object","properties":{"a":{"$ref":"#/$defs/arr"}},"$defs":{"arr":{"anyOf":[{"type":"integer"},{"type":"array","items":{"$ref":"#/$defs/arr"}}]}}}`,
			valid:  []string{`{"a":[[[[[[[[[1]]]]]]]]]}`},
			invalid: map[string]string{
				`{"a":[[[[[[[[[1,"x"]]]]]]]]]}`:                  "/a/0/0/0/0/0/0/0/0/1",
				`{"a":[0,[1,[2,[3,[4,[5,[6,[7,[8,true]]]]]]]]]}`: "/a/1/1/1/1/1/1/1/1/1",
			},
		},
		{
			name:   "draft-07 definitions",
			schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/s"}},"definitions":{"s":{"type":"string"}}}`,
			valid:  []string{`{"a":"x"}`},
			invalid: map[string]string{
				`{"a":1}`: "/a",
			},
		},
		{
			name:   "escaped property names in pointers",
			schema: `{"type":"object","properties":{"a/b":{"type":"string"},"c~d":{"type":"string"}}}`,
			valid:  []string{`{"a/b":"x"}`},
			invalid: map[string]string{
				`{"a/b":1}`: "/a~1b",
				`{"c~d":1}`: "/c~0d",
			},
		},
		{
			name:   "nesting cap",
			schema: `{"type":"object"}`,
			valid:  []string{`{"a":` + strings.Repeat("[", maxNesting-1) + strings.Repeat("]", maxNesting-1) + `}`},
			invalid: map[string]string{
				`{"a":` + strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting) + `}`: "",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tool *Tool
			if tt.schema == "" {
				tool = &Tool{Name: "t", Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }}
				if _, err := NewCatalog(tool); err != nil {
					t.Fatal(err)
				}
			} else {
				tool = toolWith(t, tt.schema)
			}
			for _, a := range tt.valid {
				if err := tool.Validate(json.RawMessage(a)); err != nil {
					t.Errorf("Validate(%s) = %v, want nil", a, err)
				}
			}
			for a, path := range tt.invalid {
				var e *sandbox.Error
				err := tool.Validate(json.RawMessage(a))
				if !errors.As(err, &e) || e.Code != sandbox.EToolArgs {
					t.Errorf("Validate(%s) = %v, want E_TOOL_ARGS", a, err)
					continue
				}
				if e.Path != path {
					t.Errorf("Validate(%s).Path = %q, want %q (%v)", a, e.Path, path, e)
				}
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#anchor"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","pattern":"(?=x)"}}}`,
		`{"type":"object","properties":{"a":{"type":"strnig"}}}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"type":"object","properties":{"x":{"$ref":"#/$defs/a"}}}`,
	} {
		if _, err := compileValidator(mustSchema(t, schema)); err == nil {
			t.Errorf("compileValidator(%s) = nil error, want one", schema)
		}
	}
}

// A schema that refers to itself without consuming input must not loop.
func TestValidateSelfReference(t *testing.T) {
	tool := toolWith(t, `{"type":"object","properties":{"a":{"$ref":"#/properties/a","type":"string"}}}`)
	if err := tool.Validate(json.RawMessage(`{"a":"x"}`)); !errors.Is(err, sandbox.ErrToolArgs) {
		t.Errorf("Validate = %v, want E_TOOL_ARGS", err)
	}
}

// Echoed values are capped: a megabyte argument does not make a megabyte
// message.
func TestValidateCapsEcho(t *testing.T) {
	tool := toolWith(t, expenseSchema)
	big := strings.Repeat("x", 1<<20)
	for _, args := range []string{
		`{"member_id":"E","quarter":"` + big + `"}`,
		`{"member_id":"E","quarter":"Q1","` + big + `":1}`,
		`{"member_id":"E","quarter":"Q1","limit":"` + big + `"}`,
		`{"member_id":"` + big + `","quarter":"Q1"}`,
	} {
		var e *sandbox.Error
		if err := tool.Validate(json.RawMessage(args)); !errors.As(err, &e) {
			t.Fatalf("Validate = %v", err)
		}
		if len(e.Message) > 512 || len(e.Hint) > 2048 {
			t.Errorf("message %d bytes, hint %d bytes: not capped", len(e.Message), len(e.Hint))
		}
	}
}

// Validate agrees with jsonschema-go on validity, for the cases where
// JSON Schema leaves no room for choice.
func TestValidateAgreesWithJSONSchemaGo(t *testing.T) {
	schemas := []string{expenseSchema,
		`{"type":"object","properties":{"a":{"anyOf":[{"type":"string","maxLength":2},{"type":"integer","minimum":10}]},"b":{"type":"array","items":{"type":"number","maximum":3}}}}`,
	}
	args := []string{
		`{}`, `{"member_id":"E","quarter":"Q1"}`, `{"member_id":"E","quarter":"Q5"}`, `{"member_id":"","quarter":"Q1"}`,
		`{"member_id":"E","quarter":"Q1","tags":["a","b","a"]}`, `{"member_id":"E","quarter":"Q1","filter":{"level":"L1","x":1}}`,
		`{"member_id":"E","quarter":"Q1","ratio":0.999}`, `{"member_id":"E","quarter":"Q1","ratio":1}`, `{"member_id":"E","quarter":"Q1","limit":50}`,
		`{"a":"ab"}`, `{"a":"abc"}`, `{"a":11}`, `{"a":9}`, `{"b":[1,2,3]}`, `{"b":[1,2,3.5]}`, `{"a":null}`, `{"x":1}`,
	}
	for _, sj := range schemas {
		s := mustSchema(t, sj)
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		tool := toolWith(t, sj)
		for _, a := range args {
			var inst any
			if err := json.Unmarshal([]byte(a), &inst); err != nil {
				t.Fatal(err)
			}
			want := r.Validate(inst) == nil
			got := tool.Validate(json.RawMessage(a)) == nil
			if got != want {
				t.Errorf("schema %.40s… args %s: valid = %v, jsonschema-go says %v", sj, a, got, want)
			}
		}
	}
}

func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		`{"member_id":"ENG-001","quarter":"Q3"}`, `{"member_id":"E","quarter":"Q3","tags":["a"],"filter":{"level":"L1"}}`,
		`{"member_id":"E","quarter":"Q3","limit":5,"ratio":0.5,"code":"ABC","flag":true}`, `{}`, `null`, ``, `[`, `{"a":[{"b":{}}]}`,
		`{"member\u005fid":"\ud83d\ude00","quarter":"Q3"}`, `{"limit":1e999}`, `{"limit":-0.0e-0}`, "{\"member_id\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	type filter struct {
		Level string `json:"level,omitempty" enum:"L1,L2"`
	}
	type args struct {
		MemberID string   `json:"member_id" maxLength:"8"`
		Quarter  string   `json:"quarter" enum:"Q1,Q2,Q3,Q4"`
		Limit    int      `json:"limit,omitempty" minimum:"1" maximum:"100"`
		Ratio    float64  `json:"ratio,omitempty"`
		Tags     []string `json:"tags,omitempty" enum:"a,b" maxItems:"2"`
		Code     string   `json:"code,omitempty" pattern:"^[A-Z]{3}$"`
		Flag     bool     `json:"flag,omitempty"`
		Filter   *filter  `json:"filter,omitempty"`
	}
	type flat struct {
		MemberID string `json:"member_id"`
		Quarter  string `json:"quarter" enum:"Q1,Q2,Q3,Q4"`
		Limit    int8   `json:"limit,omitempty"`
		Ratio    float32
		Flag     bool `json:"flag,omitempty"`
	}
	nested := MustFunc(Tool{Name: "nested"}, func(_ context.Context, a args) (args, error) { return a, nil })
	flatTool := MustFunc(Tool{Name: "flat"}, func(_ context.Context, a flat) (flat, error) { return a, nil })
	open := toolWith(f, expenseSchema)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tool := range []*Tool{nested, flatTool, open} {
			err := tool.Validate(data)
			if err != nil {
				var e *sandbox.Error
				if !errors.As(err, &e) || e.Code != sandbox.EToolArgs || len(e.Message) > sandbox.MaxMessageBytes {
					t.Fatalf("%s: Validate(%q) = %#v", tool.Name, data, err)
				}
				continue
			}
			if d := jsonscan.Trim(data); len(d) > 0 && string(d) != "null" && !json.Valid(d) {
				t.Fatalf("%s: Validate accepted invalid JSON %q", tool.Name, data)
			}
			// Validated arguments decode, or fail as E_TOOL_ARGS; never a panic.
			if _, err := tool.Handler(context.Background(), data); err != nil && !errors.Is(err, sandbox.ErrToolArgs) {
				t.Fatalf("%s: Handler(%q) after validation = %v", tool.Name, data, err)
			}
		}
	})
}
