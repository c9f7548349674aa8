package sandbox_test

import (
	"flag"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite ../imports.txt from the tree")

// The layers, top to bottom. A package may import a package of a lower
// rank, or of its own layer (same top-level folder), never one above. The
// sandbox root is the stdlib-only vocabulary, below its engines
// (sandbox/*), which may import only the sandbox layers. policy is a leaf:
// it imports nothing of the module. store (state shared by replicas) is a
// bottom layer too: it imports nothing of the module but its own, and so
// does internal (internal/testenv, the tests' shared tools). bench (what
// `sandcall bench` measures) sits over the examples it runs and under the
// command.
var ranks = map[string]int{
	"cmd":       7,
	"cli":       6,
	"bench":     5,
	"examples":  4,
	"bindings":  3,
	"tools":     2,
	"sandbox/*": 1,
	"sandbox":   0,
	"policy":    0,
	"store":     0,
	"internal":  0,
}

// upwardExceptions are upward imports tolerated for now; the list only
// shrinks: an entry that no longer occurs fails the test. It is empty:
// tools/mcpserver became bindings/mcpserver, bindings/prelude became
// sandbox/js/prelude, and tools/upstream reads the caller through
// tools.CallerFrom.
var upwardExceptions = []string{}

// layer returns the layer of a module-relative package path.
func layer(pkg string) string {
	top, _, sub := strings.Cut(pkg, "/")
	if top == "sandbox" && sub {
		return "sandbox/*"
	}
	return top
}

// allowed reports whether package from may import package to.
func allowed(from, to string) bool {
	lf, lt := layer(from), layer(to)
	switch {
	case lf == "policy":
		return false // a leaf
	case lf == "sandbox":
		return false // the stdlib-only vocabulary
	case lf == "sandbox/*":
		return lt == "sandbox" || lt == "sandbox/*"
	case lf == lt:
		return true
	}
	rf, okf := ranks[lf]
	rt, okt := ranks[lt]
	return okf && okt && rt < rf
}

// moduleImports parses every non-test Go file under root (build tags
// ignored: the union over all platforms) and returns, per package
// directory, its imports: module packages (module-relative) and
// third-party packages; the standard library is left out.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	graph := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if _, ok := graph[dir]; !ok {
			graph[dir] = []string{}
		}
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			first, _, _ := strings.Cut(imp, "/")
			switch {
			case imp == module || strings.HasPrefix(imp, module+"/"):
				imp = strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			case !strings.Contains(first, "."):
				continue // standard library
			}
			if !slices.Contains(graph[dir], imp) {
				graph[dir] = append(graph[dir], imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, imps := range graph {
		slices.Sort(imps)
	}
	return graph
}

func isModulePkg(imp string) bool {
	_, ok := ranks[layer(imp)]
	return ok && !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".")
}

// TestLayers fails on any import that runs up the rank table, except the
// listed ones, and on an exception that no longer occurs.
func TestLayers(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	graph := moduleImports(t, root)
	if len(graph) < 10 {
		t.Fatalf("found only %d packages under %s", len(graph), root)
	}
	seen := map[string]bool{}
	for from, imps := range graph {
		if _, ok := ranks[layer(from)]; !ok {
			t.Errorf("package %s is in no layer: add its top-level folder to the rank table", from)
			continue
		}
		for _, to := range imps {
			if !isModulePkg(to) || allowed(from, to) {
				continue
			}
			edge := from + " -> " + to
			if slices.Contains(upwardExceptions, edge) {
				seen[edge] = true
				continue
			}
			t.Errorf("%s imports %s: %s (rank %d) may not import %s (rank %d); move the code down, or the import",
				from, to, layer(from), ranks[layer(from)], layer(to), ranks[layer(to)])
		}
	}
	for _, e := range upwardExceptions {
		if !seen[e] {
			t.Errorf("exception %q no longer occurs: remove it from upwardExceptions", e)
		}
	}
}

// TestLayersCatchUpward: the rank table rejects the imports it must.
func TestLayersCatchUpward(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"cmd/sandcall", "bindings", true},
		{"cmd/sandcall", "cli", true},
		{"cli", "examples/demo", true},
		{"bindings", "tools", true},
		{"tools/local", "sandbox", true},
		{"sandbox/js", "sandbox/internal/lru", true},
		{"bindings/tsdecl", "bindings", true},
		{"tools", "bindings", false},
		{"tools/upstream", "bindings", false},
		{"sandbox", "sandbox/js", false},
		{"sandbox/js", "tools", false},
		{"sandbox/process", "policy", false},
		{"policy", "sandbox", false},
		{"bindings", "examples/demo", false},
		{"examples/demo", "cmd/sandcall", false},
		{"examples/demo", "cli", false},
		{"cli", "cmd/sandcall", false},
	} {
		if got := allowed(c.from, c.to); got != c.ok {
			t.Errorf("allowed(%s -> %s) = %v, want %v", c.from, c.to, got, c.ok)
		}
	}
}

// TestImportGraph compares the tree's imports with ../imports.txt, so that
// a change to the graph shows in review (like tailscale's depaware.txt).
// Regenerate with: go test ./sandbox -run TestImportGraph -args -update
func TestImportGraph(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	graph := moduleImports(t, root)
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	var b strings.Builder
	b.WriteString("# The import graph of " + module + ", non-test files, all platforms;\n")
	b.WriteString("# standard library left out. Checked by sandbox.TestImportGraph;\n")
	b.WriteString("# regenerate with: go test ./sandbox -run TestImportGraph -args -update\n")
	for _, p := range pkgs {
		b.WriteString("\n" + p + "\n")
		for _, imp := range graph[p] {
			b.WriteString("\t" + imp + "\n")
		}
	}
	file := filepath.Join(root, "imports.txt")
	if *update {
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (generate it with -update)", err)
	}
	if string(want) != b.String() {
		t.Errorf("imports.txt is stale: the import graph changed; review the change and run\n\tgo test ./sandbox -run TestImportGraph -args -update\ngot:\n%s", b.String())
	}
}
