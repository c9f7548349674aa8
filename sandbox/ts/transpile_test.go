package ts

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
)

func TestLookup(t *testing.T) {
	// Generated line 0: segments at columns 0 and 4 from (0,0) and (1,2);
	// line 1: none; line 2: a segment at column 2 from (3,0).
	const mappings = "AAAA,IACE;;EAEF"
	for _, tc := range []struct{ line, col, sLine, sCol int }{
		{0, 0, 0, 0}, {0, 3, 0, 0}, {0, 4, 1, 2}, {0, 99, 1, 2},
		{1, 5, 1, 2}, // no segment on the line: the last one before it
		{2, 0, 3, 0}, // before the line's first segment: that segment
		{2, 7, 3, 0},
	} {
		l, c, ok := lookup(mappings, tc.line, tc.col)
		if !ok || l != tc.sLine || c != tc.sCol {
			t.Errorf("lookup(%d, %d) = %d, %d, %v; want %d, %d", tc.line, tc.col, l, c, ok, tc.sLine, tc.sCol)
		}
	}
	if _, _, ok := lookup("", 0, 0); ok {
		t.Error("empty mappings found a segment")
	}
	if _, _, ok := lookup("A!", 0, 0); ok {
		t.Error("a bad segment was used")
	}
}

func TestColumns(t *testing.T) {
	line := "a😀é b"
	// bytes: a=0, 😀=1..4, é=5..6, space=7, b=8; UTF-16: a=0, 😀=1..2, é=3, space=4, b=5.
	for _, tc := range []struct{ bytes, units int }{{0, 0}, {1, 1}, {5, 3}, {7, 4}, {8, 5}, {9, 6}} {
		if got := utf16Col(line, tc.bytes); got != tc.units {
			t.Errorf("utf16Col(%d) = %d, want %d", tc.bytes, got, tc.units)
		}
		if got := byteCol(line, tc.units); got != tc.bytes {
			t.Errorf("byteCol(%d) = %d, want %d", tc.units, got, tc.bytes)
		}
	}
}

// TestPos maps every statement of a transpiled program back to its line.
func TestPos(t *testing.T) {
	src := "interface I { a: number }\n// comment\n\nconst a: I = { a: 1 }\nconst b = a.a as number\nlet c = `x\ny`\nconst d = c"
	o, err := Transpile(src)
	if err != nil {
		t.Fatal(err)
	}
	// The output is one line per template-literal line break.
	for _, tc := range []struct {
		find      string
		skip      int // bytes from the start of find
		line, col int
	}{{"const a", 0, 4, 1}, {"const b", 0, 5, 1}, {"let c", 0, 6, 1}, {"const d", 0, 8, 1}, {"d=c", 2, 8, 11}} {
		i := strings.Index(o.JS, tc.find) + tc.skip
		if i < tc.skip {
			t.Fatalf("%q not in %q", tc.find, o.JS)
		}
		line := strings.Count(o.JS[:i], "\n") + 1
		col := i - (strings.LastIndexByte(o.JS[:i], '\n') + 1) + 1
		if l, c := o.Pos(src, line, col); l != tc.line || c != tc.col {
			t.Errorf("%q at %d:%d maps to %d:%d, want %d:%d", tc.find, line, col, l, c, tc.line, tc.col)
		}
	}
	if l, c := o.Pos(src, 99, 1); l != 0 || c != 0 {
		t.Errorf("a line past the end maps to %d:%d", l, c)
	}
}

type nopHost struct{}

func (nopHost) Call(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage("null"), nil
}

type jsEcho struct{ got string }

func (j *jsEcho) Execute(_ context.Context, job *sandbox.Job, _ sandbox.Host) *sandbox.Outcome {
	j.got = job.Program.Source
	if job.Program.Language != sandbox.JavaScript {
		return &sandbox.Outcome{Err: sandbox.Errorf(sandbox.EInternal, "", "not javascript")}
	}
	return &sandbox.Outcome{Value: json.RawMessage("null")}
}

// TestCache checks that transpiled programs are cached by source and that
// the cache is bounded by bytes.
func TestCache(t *testing.T) {
	inner := &jsEcho{}
	e := New(Config{JS: inner, CacheBytes: 400})
	job := func(src string) *sandbox.Job {
		return &sandbox.Job{Program: sandbox.Program{Language: sandbox.TypeScript, Source: src}, Limits: sandbox.DefaultLimits()}
	}
	for range 3 {
		if out := e.Execute(context.Background(), job("const a: number = 1\nreturn a"), nopHost{}); out.Err != nil {
			t.Fatal(out.Err)
		}
	}
	if n := e.cache.Len(); n != 1 {
		t.Fatalf("cache holds %d programs after one program ran three times, want 1", n)
	}
	if inner.got != "const a=1;return a" {
		t.Fatalf("the JavaScript executor got %q", inner.got)
	}
	for i := range 20 {
		e.Execute(context.Background(), job(strings.Repeat(" ", i)+"return 1 as number"), nopHost{})
	}
	if n := e.cache.Len(); n == 0 || n > 400/64 {
		t.Fatalf("cache holds %d programs; want between 1 and %d", n, 400/64)
	}
	if out := e.Execute(context.Background(), job("let x = ;"), nopHost{}); out.Err == nil {
		t.Fatal("a syntax error ran")
	}
	none := New(Config{JS: inner, CacheBytes: -1})
	none.Execute(context.Background(), job("return 1"), nopHost{})
	if none.cache.Len() != 0 {
		t.Fatal("a disabled cache holds a program")
	}
}

// FuzzTranspile checks that Transpile never panics and that every position
// of its output maps into the source or to nothing. Inputs are capped at
// 1 KiB: esbuild's parser is superlinear on some shapes (see the package
// doc), which the executor bounds with the run's deadline.
func FuzzTranspile(f *testing.F) {
	for _, s := range []string{
		"return 1", "const a: number = 1\nreturn a", "interface A { x: number }\nlet b = `a\n${1}`", "let x = ;",
		"}); (async () => {", "enum E { A, B }\nclass C { constructor(private x: number) {} }",
		"const s = \"😀\"; throw new Error(s)", "/* ( */ return [1, 2] as const", "a < b < c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1<<10 {
			return
		}
		o, err := Transpile(src)
		if err != nil {
			if err.Code != sandbox.ESyntax && err.Code != sandbox.ESourceLimit {
				t.Fatalf("code %s: %v", err.Code, err)
			}
			return
		}
		lines := strings.Split(src, "\n")
		for i, l := range strings.Split(o.JS, "\n") {
			for col := 1; col <= len(l)+1; col += 1 + col/4 {
				sl, sc := o.Pos(src, i+1, col)
				if sl == 0 && sc == 0 {
					continue
				}
				if sl < 1 || sl > len(lines) || sc < 1 || sc > len(lines[sl-1])+1 {
					t.Fatalf("JS %d:%d maps to %d:%d, outside the source", i+1, col, sl, sc)
				}
			}
		}
	})
}
