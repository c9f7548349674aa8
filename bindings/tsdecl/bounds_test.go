package tsdecl_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/bindings/tsdecl"
	"github.com/sandcall/sandcall/tools"
)

// TestLongLiteralsStayClosed: a property name, an enum value or a const
// longer than the literal cap is cut inside its quotes, so the declaration
// never holds an unterminated string.
func TestLongLiteralsStayClosed(t *testing.T) {
	long := strings.Repeat("y", 300)
	b := []byte(`{"type":"object","properties":{` +
		`"` + long + `-k":{"type":"string","enum":["` + long + `","b"]},` +
		`"c":{"const":"` + long + `"},` +
		`"` + strings.Repeat("z", 5000) + `":{"type":"number"}}}`)
	s, err := tools.ParseSchema(b)
	if err != nil {
		t.Fatal(err)
	}
	tool := &tools.Tool{Name: "x", Description: "d", InputSchema: s}
	d := tsdecl.Declaration(tool)
	if _, ok := stripComments(d); !ok {
		t.Errorf("unterminated string or comment in:\n%.600s", d)
	}
	if strings.Contains(d, strings.Repeat("z", 1000)) {
		t.Errorf("a 5000-byte property name is shown whole:\n%.400s", d)
	}
	for _, sig := range []string{tsdecl.Signature(tool), tsdecl.Type(s)} {
		if _, ok := stripComments(sig); !ok && !strings.HasSuffix(sig, "…") {
			t.Errorf("unterminated string in %.400q", sig)
		}
	}
}

// TestRefDAGBounded: $defs that reference each other many times over (no
// cycle) with long property names, a schema of half a MiB an upstream
// could send, render with bounded work: the writers stop once their text
// is far past what a declaration can hold.
func TestRefDAGBounded(t *testing.T) {
	defs := map[string]any{}
	for i := 0; i < 8; i++ {
		props := map[string]any{}
		for j := 0; j < 8; j++ {
			name := fmt.Sprintf("p%d_%d_", i, j) + strings.Repeat("x", 8<<10)
			if i < 7 {
				props[name] = map[string]any{"$ref": fmt.Sprintf("#/$defs/D%d", i+1), "description": strings.Repeat("d ", 400)}
			} else {
				props[name] = map[string]any{"type": "string"}
			}
		}
		defs[fmt.Sprintf("D%d", i)] = map[string]any{"type": "object", "properties": props}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "$defs": defs,
		"properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/D0"}}})
	s, err := tools.ParseSchema(b)
	if err != nil {
		t.Fatal(err)
	}
	tool := &tools.Tool{Name: "x", Description: "d", InputSchema: s, OutputSchema: s}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	d := tsdecl.Declaration(tool)
	sig := tsdecl.Signature(tool)
	runtime.ReadMemStats(&m1)
	if len(d) > tsdecl.MaxDeclarationBytes || len(sig) > tsdecl.MaxSignatureBytes {
		t.Fatalf("declaration %d bytes, signature %d bytes", len(d), len(sig))
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 64<<20 {
		t.Errorf("rendering a %d-byte schema allocated %d MiB", len(b), alloc>>20)
	}
}

// TestResultCutFirst: when a result's type fills the budget alone (an
// HTTP API's answer), the arguments keep their detail and the result
// loses it.
func TestResultCutFirst(t *testing.T) {
	props := map[string]any{}
	for i := 0; i < 60; i++ {
		inner := map[string]any{}
		for j := 0; j < 30; j++ {
			inner[fmt.Sprintf("field_%d", j)] = map[string]any{"type": "string", "description": strings.Repeat("words ", 20)}
		}
		props[fmt.Sprintf("part_%d", i)] = map[string]any{"type": "object", "properties": inner}
	}
	out, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	in := `{"type":"object","properties":{"body":{"type":"object","properties":{"title":{"type":"string","description":"The issue's title."}},"required":["title"]}},"required":["body"]}`
	result, err := tools.ParseSchema(out)
	if err != nil {
		t.Fatal(err)
	}
	is, _ := tools.ParseSchema([]byte(in))
	d := tsdecl.Declaration(&tools.Tool{Name: "create_issue", Description: "Create an issue.", InputSchema: is, OutputSchema: result})
	if len(d) > tsdecl.MaxDeclarationBytes || !strings.Contains(d, "/** The issue's title. */") || !strings.Contains(d, "title: string;") {
		t.Errorf("declaration (%d bytes) lost the arguments' detail:\n%.2000s", len(d), d)
	}
}
