package tsdecl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/bindings/tsdecl"
	"github.com/sandcall/sandcall/tools"
)

// FuzzDeclaration renders schemas an upstream server could send: whatever
// the schema, rendering ends, stays within its byte caps, and no text of
// the schema escapes a comment.
func FuzzDeclaration(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b, "desc */ x")
		}
	}
	f.Add([]byte(`{"$ref":"#","properties":{"a":{"$ref":"#"}}}`), "")
	f.Add([]byte(`{"type":"object","properties":{"*/":{"description":"*/ escape"}}}`), "*/")
	f.Fuzz(func(t *testing.T, schema []byte, desc string) {
		s, err := tools.ParseSchema(schema)
		if err != nil {
			return
		}
		tool := &tools.Tool{Name: "fuzzed", Description: desc, InputSchema: s, OutputSchema: s}
		d := tsdecl.Declaration(tool)
		if len(d) > tsdecl.MaxDeclarationBytes {
			t.Fatalf("declaration is %d bytes", len(d))
		}
		if sig := tsdecl.Signature(tool); len(sig) > tsdecl.MaxSignatureBytes || strings.Contains(sig, "\n") {
			t.Fatalf("signature %q", sig)
		}
		if _, ok := stripComments(d); !ok && !strings.HasSuffix(d, "/* … cut */") {
			t.Fatalf("unclosed comment or string in:\n%s", d)
		}
	})
}
