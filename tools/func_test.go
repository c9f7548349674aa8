package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/sandcall/sandcall/sandbox"
)

type level string

type inner struct {
	Level level    `json:"level" enum:"L1,L2,L3"`
	Sizes []int    `json:"sizes,omitempty" enum:"1,2,3" maxItems:"2"`
	Note  *string  `json:"note,omitempty" maxLength:"5"`
	Tags  []string `json:"tags,omitempty" minLength:"1"`
}

type outer struct {
	Name   string           `json:"name" jsonschema:"who to greet" minLength:"1" maxLength:"10"`
	Count  int              `json:"count,omitempty" minimum:"0" maximum:"9"`
	Inner  inner            `json:"inner"`
	Items  []inner          `json:"items,omitempty"`
	ByName map[string]inner `json:"by_name,omitempty"`
	Skip   string           `json:"-"`
	hidden int
}

func schemaJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFuncSchema(t *testing.T) {
	tool, err := Func(Tool{Name: "greet"}, func(_ context.Context, in outer) (string, error) { return "hi " + in.Name, nil })
	if err != nil {
		t.Fatal(err)
	}
	in := tool.InputSchema
	if in.Type != "object" || !IsFalseSchema(in.AdditionalProperties) {
		t.Errorf("input schema not a closed object: %s", schemaJSON(t, in))
	}
	if got, want := in.Required, []string{"name", "inner"}; !reflect.DeepEqual(got, want) {
		t.Errorf("required = %v, want %v", got, want)
	}
	if got, want := in.PropertyOrder, []string{"name", "count", "inner", "items", "by_name"}; !reflect.DeepEqual(got, want) {
		t.Errorf("property order = %v, want %v", got, want)
	}
	name := in.Properties["name"]
	if name.Description != "who to greet" || *name.MinLength != 1 || *name.MaxLength != 10 {
		t.Errorf("name = %s", schemaJSON(t, name))
	}
	if c := in.Properties["count"]; *c.Minimum != 0 || *c.Maximum != 9 {
		t.Errorf("count = %s", schemaJSON(t, c))
	}
	for _, s := range []string{
		schemaJSON(t, in.Properties["inner"]),
		schemaJSON(t, in.Properties["items"].Items),
		schemaJSON(t, in.Properties["by_name"].AdditionalProperties),
	} {
		for _, want := range []string{
			`"level":{"type":"string","enum":["L1","L2","L3"]}`,
			`"sizes":{"type":["null","array"],"items":{"type":"integer","enum":[1,2,3]},"maxItems":2}`,
			`"note":{"type":["null","string"],"maxLength":5}`,
			`"tags":{"type":["null","array"],"items":{"type":"string","minLength":1}}`,
			`"additionalProperties":false`,
		} {
			if !strings.Contains(s, want) {
				t.Errorf("inner schema %s\nlacks %s", s, want)
			}
		}
	}
	if tool.OutputSchema.Type != "string" {
		t.Errorf("output schema = %s, want a string", schemaJSON(t, tool.OutputSchema))
	}
	if _, ok := in.Properties["Skip"]; ok {
		t.Error(`json:"-" field in schema`)
	}
}

func TestFuncErrors(t *testing.T) {
	ok := func(context.Context, struct{}) (int, error) { return 0, nil }
	if _, err := Func(Tool{Name: "x"}, func(context.Context, int) (int, error) { return 0, nil }); err == nil {
		t.Error("Func accepted a non-struct input")
	}
	if _, err := Func(Tool{Name: "x", Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }}, ok); err == nil {
		t.Error("Func accepted a tool with a Handler")
	}
	if _, err := Func[struct{}, int](Tool{Name: "x"}, nil); err == nil {
		t.Error("Func accepted a nil function")
	}
	type badEnum struct {
		N int `json:"n" enum:"1,two"`
	}
	if _, err := Func(Tool{Name: "x"}, func(context.Context, badEnum) (int, error) { return 0, nil }); err == nil {
		t.Error("Func accepted a bad enum tag")
	}
	type badPattern struct {
		S string `json:"s" pattern:"(?=x)"`
	}
	if _, err := Func(Tool{Name: "x"}, func(context.Context, badPattern) (int, error) { return 0, nil }); err == nil {
		t.Error("Func accepted a pattern Go cannot compile")
	}
	defer func() {
		if recover() == nil {
			t.Error("MustFunc did not panic")
		}
	}()
	MustFunc(Tool{Name: "x"}, func(context.Context, string) (int, error) { return 0, nil })
}

func TestFuncCall(t *testing.T) {
	type in struct {
		A string `json:"a"`
		N int    `json:"n,omitempty"`
	}
	shared := ToolError(sandbox.EToolFailed, "shared", "")
	tool := MustFunc(Tool{Name: "f"}, func(ctx context.Context, in in) (map[string]any, error) {
		switch in.A {
		case "sandbox":
			return nil, shared
		case "plain":
			return nil, errors.New(strings.Repeat("s", 10000))
		case "transient":
			return nil, Transient("backend busy", "Try again.")
		case "panic":
			panic("secret panic value")
		case "cancel":
			return nil, fmt.Errorf("wrapped: %w", context.Canceled)
		case "deadline":
			return nil, context.DeadlineExceeded
		case "nan":
			return map[string]any{"x": func() {}}, nil
		}
		return map[string]any{"a": in.A, "html": "<b>&</b>", "n": in.N}, nil
	})
	ctx := context.Background()
	res, err := tool.Call(ctx, json.RawMessage(`{"a":"x","n":3}`))
	if err != nil || string(res) != `{"a":"x","html":"<b>&</b>","n":3}` {
		t.Errorf("Call = %s, %v", res, err)
	}
	tests := []struct {
		a         string
		code      sandbox.Code
		retryable bool
		msg       string
	}{
		{"sandbox", sandbox.EToolFailed, false, "shared"},
		{"transient", sandbox.EToolFailed, true, "backend busy"},
		{"panic", sandbox.EToolFailed, false, "the tool failed unexpectedly"},
		{"cancel", sandbox.ECancelled, false, "the tool call was cancelled"},
		{"deadline", sandbox.EToolFailed, true, "the tool call timed out"},
		{"nan", sandbox.EToolFailed, false, "the tool's result cannot be encoded as JSON"},
	}
	for _, tt := range tests {
		_, err := tool.Call(ctx, json.RawMessage(`{"a":"`+tt.a+`"}`))
		var e *sandbox.Error
		if !errors.As(err, &e) || e.Code != tt.code || e.Retryable != tt.retryable || e.Message != tt.msg || e.Tool != "f" {
			t.Errorf("Call(%s) = %#v, want %s %q retryable=%v", tt.a, err, tt.code, tt.msg, tt.retryable)
		}
	}
	if shared.Tool != "" {
		t.Error("Func mutated the tool's own error value")
	}
	_, err = tool.Call(ctx, json.RawMessage(`{"a":"plain"}`))
	var e *sandbox.Error
	if !errors.As(err, &e) || e.Code != sandbox.EToolFailed || len(e.Message) > MaxErrorTextBytes {
		t.Errorf("plain error: %v (%d bytes), want E_TOOL_FAILED capped at %d", e.Code, len(e.Message), MaxErrorTextBytes)
	}
	// Validation runs first: the function never sees bad arguments.
	if _, err := tool.Call(ctx, json.RawMessage(`{"a":1}`)); !errors.Is(err, sandbox.ErrToolArgs) {
		t.Errorf("Call with bad args = %v, want E_TOOL_ARGS", err)
	}
	if _, err := tool.Call(ctx, json.RawMessage(`{"A":"x"}`)); !errors.Is(err, sandbox.ErrToolArgs) {
		t.Errorf("Call with a differently cased key = %v, want E_TOOL_ARGS", err)
	}
}

func TestFuncPointerInputAndEncoded(t *testing.T) {
	type in struct {
		N int `json:"n,omitempty"`
	}
	tool := MustFunc(Tool{Name: "p"}, func(_ context.Context, in *in) (Encoded[[]int], error) {
		if in == nil {
			return nil, errors.New("nil input")
		}
		return Encode([]int{in.N, in.N + 1})
	})
	if tool.InputSchema.Type != "object" {
		t.Errorf("pointer input: schema type %q, want object", tool.InputSchema.Type)
	}
	if got := schemaJSON(t, tool.OutputSchema); got != `{"type":["null","array"],"items":{"type":"integer"}}` {
		t.Errorf("Encoded output schema = %s", got)
	}
	for args, want := range map[string]string{`{"n":4}`: `[4,5]`, ``: `[0,1]`, `null`: `[0,1]`, `{}`: `[0,1]`} {
		res, err := tool.Call(context.Background(), json.RawMessage(args))
		if err != nil || string(res) != want {
			t.Errorf("Call(%s) = %s, %v; want %s", args, res, err, want)
		}
	}
}

// A schema given by the author may be open: the decoder then still rejects
// unknown fields.
func TestFuncAuthorSchemaStrictDecode(t *testing.T) {
	type in struct {
		A string `json:"a"`
	}
	tool := MustFunc(Tool{Name: "s", InputSchema: mustSchema(t, `{"type":"object","properties":{"a":{"type":"string"}}}`)},
		func(_ context.Context, in in) (string, error) { return in.A, nil })
	if _, err := tool.Call(context.Background(), json.RawMessage(`{"a":"x","b":1}`)); !errors.Is(err, sandbox.ErrToolArgs) {
		t.Errorf("unknown field with an open author schema = %v, want E_TOOL_ARGS", err)
	}
}

type flatAll struct {
	S   string  `json:"s"`
	B   bool    `json:"b"`
	I   int     `json:"i"`
	I8  int8    `json:"i8"`
	I16 int16   `json:"i16"`
	I32 int32   `json:"i32"`
	I64 int64   `json:"i64"`
	U   uint    `json:"u"`
	U8  uint8   `json:"u8"`
	U16 uint16  `json:"u16"`
	U32 uint32  `json:"u32"`
	U64 uint64  `json:"u64"`
	F32 float32 `json:"f32"`
	F64 float64 `json:"f64"`
	L   level   `json:"l"`
	X   string  `json:"-"`
	y   int
}

func TestFlatPlan(t *testing.T) {
	if planFor(reflect.TypeFor[flatAll]()) == nil {
		t.Fatal("flatAll has no plan")
	}
	type nested struct{ A []int }
	type embedded struct{ flatAll }
	type withString struct {
		N int `json:"n,string"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[nested](), reflect.TypeFor[embedded](), reflect.TypeFor[withString](), reflect.TypeFor[int]()} {
		if planFor(typ) != nil {
			t.Errorf("planFor(%v) != nil", typ)
		}
	}
}

// The flat decoder agrees with json.Unmarshal whenever it succeeds.
func FuzzFlatDecode(f *testing.F) {
	for _, s := range []string{
		`{"s":"x","b":true,"i":-5,"i8":127,"i16":-32768,"i32":5,"i64":9223372036854775807,"u":1,"u8":255,"u16":1,"u32":4294967295,"u64":18446744073709551615,"f32":1.5,"f64":-2e-3,"l":"L1"}`,
		`{"i8":128}`, `{"u8":-1}`, `{"s":"\u00e9\n"}`, `{"s":null}`, `{"i":1.0}`, `{"I":1}`, `{}`, `{"x":1}`, `{"f32":1e39}`,
	} {
		f.Add([]byte(s))
	}
	plan := planFor(reflect.TypeFor[flatAll]())
	f.Fuzz(func(t *testing.T, data []byte) {
		var got flatAll
		if !plan.decode(data, unsafe.Pointer(&got)) {
			return
		}
		var want flatAll
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("flat decoder accepted %q, json.Unmarshal: %v", data, err)
		}
		if got != want {
			t.Fatalf("decode(%q) = %+v, json.Unmarshal = %+v", data, got, want)
		}
	})
}
