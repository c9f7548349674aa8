package sandbox_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/sandcall/sandcall"

// TestImportRules walks the repository and enforces the third-party import
// rules of docs/layout.md: each engine has exactly one adapter package, and
// the MCP SDK stays under tools/, bindings/mcpserver, cli/, cmd/ and examples/. The rules between the
// project's own packages are the rank table of TestLayers.
func TestImportRules(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	type rule struct {
		why     string
		forbid  func(dir, imp string) bool
		allowed func(dir string) bool
	}
	under := func(dir string, prefixes ...string) bool {
		for _, p := range prefixes {
			if dir == p || strings.HasPrefix(dir, p+"/") {
				return true
			}
		}
		return false
	}
	rules := []rule{
		{"goja is imported only by sandbox/js",
			func(_, imp string) bool { return strings.HasPrefix(imp, "github.com/dop251/goja") },
			func(dir string) bool { return under(dir, "sandbox/js") }},
		{"wazero is imported only by sandbox/wasm",
			func(_, imp string) bool { return strings.HasPrefix(imp, "github.com/tetratelabs/wazero") },
			func(dir string) bool { return under(dir, "sandbox/wasm") }},
		{"esbuild is imported only by sandbox/ts",
			func(_, imp string) bool { return strings.HasPrefix(imp, "github.com/evanw/esbuild") },
			func(dir string) bool { return under(dir, "sandbox/ts") }},
		{"the MCP SDK is imported only under tools/, bindings/mcpserver, bench/, cli/, cmd/ and examples/",
			func(_, imp string) bool { return strings.HasPrefix(imp, "github.com/modelcontextprotocol/go-sdk") },
			func(dir string) bool {
				return under(dir, "tools", "bindings/mcpserver", "bench", "cli", "cmd", "examples")
			}},
	}
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || base == "testdata" || base == "node_modules") {
				return filepath.SkipDir
			}
			if base == "util" || base == "utils" || base == "common" {
				t.Errorf("%s: no util/common packages (docs/layout.md)", rel)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		files++
		dir := filepath.ToSlash(filepath.Dir(rel))
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			for _, r := range rules {
				if r.forbid(dir, imp) && !r.allowed(dir) {
					t.Errorf("%s imports %s: %s", rel, imp, r.why)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("walked only %d Go files from %s; is the test running from the repo?", files, root)
	}
}
