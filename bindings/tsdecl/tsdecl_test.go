package tsdecl_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/bindings/tsdecl"
	"github.com/sandcall/sandcall/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// fixture is a tool as testdata/*.json describes it.
type fixture struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Effects     tools.Effects   `json:"effects"`
	Input       json.RawMessage `json:"input"`
	Output      json.RawMessage `json:"output"`
	Examples    []tools.Example `json:"examples"`
}

func loadTool(t *testing.T, path string) *tools.Tool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tool := &tools.Tool{Name: f.Name, Title: f.Title, Description: f.Description, Effects: f.Effects, Examples: f.Examples,
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }}
	if len(f.Input) > 0 {
		if tool.InputSchema, err = tools.ParseSchema(f.Input); err != nil {
			t.Fatalf("%s: input: %v", path, err)
		}
	}
	if len(f.Output) > 0 {
		if tool.OutputSchema, err = tools.ParseSchema(f.Output); err != nil {
			t.Fatalf("%s: output: %v", path, err)
		}
	}
	return tool
}

// TestGolden renders each testdata/*.json tool and compares the declaration
// and the signature with testdata/*.golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			tool := loadTool(t, f)
			got := tsdecl.Declaration(tool) + "\n\n// signature:\n// " + tsdecl.Signature(tool) + "\n"
			golden := strings.TrimSuffix(f, ".json") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("declaration of %s differs from %s (go test -update rewrites it)\n--- got:\n%s\n--- want:\n%s", name, golden, got, want)
			}
		})
	}
}

// TestProperties checks what every declaration must hold, whatever the
// golden files say.
func TestProperties(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, f := range files {
		tool := loadTool(t, f)
		d := tsdecl.Declaration(tool)
		// No description may end its comment early: lexed as TypeScript,
		// the code outside comments holds no text of a description.
		code, ok := stripComments(d)
		if !ok || strings.Contains(code, "*/") || strings.Contains(code, "continues") || strings.Contains(code, "name ") {
			t.Errorf("%s: a description escapes its comment; code outside comments:\n%s", f, code)
		}
		if !strings.Contains(d, tool.Name+"(") || !strings.Contains(d, "Promise<") {
			t.Errorf("%s: no method signature:\n%s", f, d)
		}
		if tool.OutputSchema == nil && !strings.Contains(d, "Promise<unknown>") {
			t.Errorf("%s: a tool without an output schema must return Promise<unknown>:\n%s", f, d)
		}
		s := tsdecl.Signature(tool)
		if strings.Contains(s, "\n") || len(s) > tsdecl.MaxSignatureBytes {
			t.Errorf("%s: signature is not one short line: %q", f, s)
		}
	}
}

func TestTypes(t *testing.T) {
	cases := []struct{ schema, want string }{
		{`{"type":"string"}`, `string`},
		{`{"type":"integer"}`, `number`},
		{`{"type":["integer","number","null"]}`, `number | null`},
		{`{"enum":["a","b",3,true,null]}`, `"a" | "b" | 3 | true | null`},
		{`{"const":"x\"y"}`, `"x\"y"`},
		{`{"type":"array","items":{"enum":["a","b"]}}`, `("a" | "b")[]`},
		{`{"type":"array"}`, `unknown[]`},
		{`{"type":"object"}`, `Record<string, unknown>`},
		{`{"type":"object","additionalProperties":false}`, `{}`},
		{`{"type":"object","additionalProperties":{"type":"integer"}}`, `Record<string, number>`},
		{`{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"number"}},"required":["a"]}`, `{b?: string; a: number}`},
		{`{"type":"object","properties":{"x-y":{"type":"string"}},"required":["x-y"]}`, `{"x-y": string}`},
		{`{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}`, `string | string[]`},
		{`{"anyOf":[{"type":"string"},{}]}`, `unknown`},
		{`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"string"}}}]}`, `{a?: string} & {b?: string}`},
		{`{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}],"items":false}`, `[string, number]`},
		{`{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}}}`, `{next?: N}`},
		{`{"not":{}}`, `never`},
		{`{}`, `unknown`},
	}
	for _, c := range cases {
		s, err := tools.ParseSchema([]byte(c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		if got := tsdecl.Type(s); got != c.want {
			t.Errorf("Type(%s) = %s, want %s", c.schema, got, c.want)
		}
	}
	if got := tsdecl.Type(nil); got != "unknown" {
		t.Errorf("Type(nil) = %s", got)
	}
}

// TestHostileSchemas feeds schemas an upstream server could send: each must
// render, bounded in size, without hanging.
func TestHostileSchemas(t *testing.T) {
	deep := &jsonschema.Schema{Type: "string"}
	for i := 0; i < 5000; i++ {
		deep = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"x": deep}}
	}
	hugeEnum := &jsonschema.Schema{Type: "string"}
	for i := 0; i < 100000; i++ {
		hugeEnum.Enum = append(hugeEnum.Enum, fmt.Sprintf("value_%d", i))
	}
	wide := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for i := 0; i < 20000; i++ {
		wide.Properties[fmt.Sprintf("p%05d", i)] = &jsonschema.Schema{Type: "string", Description: strings.Repeat("d", 500)}
	}
	// A tree of oneOf with fan-out 10 and depth 8: 10^8 paths unless the
	// node budget stops it.
	bushy := &jsonschema.Schema{Type: "string"}
	for i := 0; i < 8; i++ {
		var alts []*jsonschema.Schema
		for j := 0; j < 10; j++ {
			alts = append(alts, &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{fmt.Sprintf("k%d", j): bushy}})
		}
		bushy = &jsonschema.Schema{OneOf: alts}
	}
	// $refs that fan out to each other: a → [b, b, b], b → [a, a, a].
	refs := &jsonschema.Schema{Ref: "#/$defs/a", Defs: map[string]*jsonschema.Schema{
		"a": {Type: "array", PrefixItems: []*jsonschema.Schema{{Ref: "#/$defs/b"}, {Ref: "#/$defs/b"}, {Ref: "#/$defs/b"}}},
		"b": {Type: "array", PrefixItems: []*jsonschema.Schema{{Ref: "#/$defs/a"}, {Ref: "#/$defs/a"}, {Ref: "#/$defs/a"}}},
	}}
	cases := map[string]*jsonschema.Schema{"deep": deep, "huge_enum": hugeEnum, "wide": wide, "bushy": bushy, "refs": refs}
	for name, s := range cases {
		in := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"v": s}}
		tool := &tools.Tool{Name: "hostile_" + name, Description: strings.Repeat("long */ description ", 100000),
			InputSchema: in, OutputSchema: s}
		d := tsdecl.Declaration(tool)
		if len(d) > tsdecl.MaxDeclarationBytes {
			t.Errorf("%s: declaration is %d bytes, over %d", name, len(d), tsdecl.MaxDeclarationBytes)
		}
		if code, ok := stripComments(d); !ok || strings.Contains(code, "description") {
			t.Errorf("%s: a description escapes its comment", name)
		}
		if s := tsdecl.Signature(tool); len(s) > tsdecl.MaxSignatureBytes {
			t.Errorf("%s: signature is %d bytes", name, len(s))
		}
		if ty := tsdecl.Type(s); len(ty) > tsdecl.MaxDeclarationBytes {
			t.Errorf("%s: type is %d bytes", name, len(ty))
		}
	}
}

// stripComments returns src without its comments, lexed as TypeScript
// (comments do not nest; string literals may hold comment delimiters); ok
// is false when a comment or string is not closed.
func stripComments(src string) (code string, ok bool) {
	var b strings.Builder
	for i := 0; i < len(src); {
		switch {
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return b.String(), false
			}
			i += 2 + end + 2
		case strings.HasPrefix(src[i:], "//"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				return b.String(), true
			}
			i += end
		case src[i] == '"':
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			if j >= len(src) {
				return b.String(), false
			}
			b.WriteString(src[i : j+1])
			i = j + 1
		default:
			b.WriteByte(src[i])
			i++
		}
	}
	return b.String(), true
}

func ExampleSignature() {
	type args struct {
		MemberID string `json:"member_id" jsonschema:"the member's id"`
		Quarter  string `json:"quarter" enum:"Q1,Q2,Q3,Q4"`
	}
	type expense struct {
		Amount   float64 `json:"amount"`
		Category string  `json:"category"`
	}
	tool := tools.MustFunc(tools.Tool{Name: "get_expenses", Description: "Lists a member's expenses for a quarter."},
		func(ctx context.Context, in args) ([]expense, error) { return nil, nil })
	fmt.Println(tsdecl.Signature(tool))
	// Output:
	// get_expenses(args: {member_id: string; quarter: "Q1" | "Q2" | "Q3" | "Q4"}): Promise<{amount: number; category: string}[] | null>
}

func BenchmarkDeclaration(b *testing.B) {
	tool := loadTool(&testing.T{}, "testdata/nested.json")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tsdecl.Declaration(tool)
	}
}

func BenchmarkSignature(b *testing.B) {
	tool := loadTool(&testing.T{}, "testdata/nested.json")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tsdecl.Signature(tool)
	}
}

// TestSignatureKeepsTypes: a signature collapses what does not fit as {…}
// (or a primitive array's element type), never as unknown where the
// declaration shows a type: unknown would tell the model something
// describe_tools contradicts.
func TestSignatureKeepsTypes(t *testing.T) {
	obj := func(props map[string]*jsonschema.Schema) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Properties: props}
	}
	deep := obj(map[string]*jsonschema.Schema{
		"a": obj(map[string]*jsonschema.Schema{
			"b": obj(map[string]*jsonschema.Schema{
				"tags":   {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
				"rows":   {Type: "array", Items: obj(map[string]*jsonschema.Schema{"id": {Type: "string"}})},
				"either": {OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "number"}}},
				"c": obj(map[string]*jsonschema.Schema{
					"tags": {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
					"rows": {Type: "array", Items: obj(map[string]*jsonschema.Schema{"id": {Type: "string"}})},
				}),
			}),
		}),
	})
	tl := &tools.Tool{Name: "deep", InputSchema: deep, OutputSchema: deep}
	sig, decl := tsdecl.Signature(tl), tsdecl.Declaration(tl)
	if n, m := strings.Count(sig, "unknown"), strings.Count(decl, "unknown"); n > m {
		t.Errorf("signature says unknown %d times, declaration %d:\n%s\n%s", n, m, sig, decl)
	}
	if !strings.Contains(sig, "{…}") {
		t.Errorf("signature collapses nothing: %s", sig)
	}
}
