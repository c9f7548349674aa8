package ts

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
)

// The program is handed to esbuild wrapped in an async arrow function, so
// that top-level await and return parse. The wrapper has a line of its own:
// line n+1 of the wrapped source is line n of the program, and columns are
// the program's. esbuild prints the wrapper back (whitespace minified) as
// outPrefix ... outSuffix, after any helpers it needs.
const (
	wrapPrefix = "(async () => {\n"
	wrapSuffix = "\n})"
	outPrefix  = "(async()=>{"
	outSuffix  = "});\n"
	// srcName names the program in esbuild's messages and source map. It is
	// not a file: Transform reads none.
	srcName = "program.ts"
)

// MaxNesting bounds the bracket nesting (and runs of prefix operators) of a
// TypeScript program, as the JavaScript engine bounds JavaScript's; it is
// checked by a linear scan before esbuild's recursive parser sees the program.
const MaxNesting = 512

// syntaxHint is the hint of a TypeScript syntax error.
const syntaxHint = "Fix the TypeScript at that line. The program is the body of an async function: " +
	"use await at top level and return the result; import, export and namespace are not available " +
	"(call tools through the tools global). Types are stripped, not checked."

// Output is a TypeScript program transpiled to JavaScript.
type Output struct {
	// JS is the program as JavaScript: the body of an async function, as
	// the JavaScript engine runs it. esbuild's helpers, if any, come first.
	JS string

	code     string // esbuild's whole output: helpers, wrapper and body
	start    int    // offset of the body in code
	mappings string // the source map's mappings, from code to the wrapped program

	planOnce sync.Once // the plan, read once per Output (a cached one too)
	pl       sandbox.Plan
	planOK   bool
}

// Plan reads the plan of the TypeScript program src (sandbox/js's Plan of
// its JavaScript, lines mapped back to src). It transpiles src: callers
// apply the source limit first, and keep in mind esbuild's running time
// (package doc) — a server plans only programs its operator trusts.
func Plan(src string) (sandbox.Plan, *sandbox.Error) {
	out, err := Transpile(src)
	if err != nil {
		return sandbox.Plan{}, err
	}
	pl, ok := out.plan(src)
	if !ok {
		return sandbox.Plan{}, sandbox.Errorf(sandbox.EInternal, "", "the program's plan could not be read")
	}
	return pl, nil
}

// plan returns the plan of the program o was transpiled from (src): its
// JavaScript's, with each line mapped back to src. ok is false when it
// could not be read.
func (o *Output) plan(src string) (sandbox.Plan, bool) {
	o.planOnce.Do(func() {
		pl, cols, err := js.PlanColumns(o.JS)
		if err != nil {
			return
		}
		for i := range pl.Tools {
			pl.Tools[i].Line, _ = o.Pos(src, pl.Tools[i].Line, cols[i])
		}
		o.pl, o.planOK = pl, true
	})
	return o.pl, o.planOK
}

// size approximates the memory an Output holds, for the cache.
func (o *Output) size() int { return len(o.code) + len(o.mappings) + 64 }

// Transpile strips the types of src, a TypeScript program (the body of an
// async function), and returns it as JavaScript. A program that does not
// parse gives E_SYNTAX at its line and column; one over MaxNesting gives
// E_SOURCE_LIMIT. Transpile does not check src's size: callers apply the
// source limit first. See the package doc for esbuild's running time.
func Transpile(src string) (*Output, *sandbox.Error) {
	if line, ok := sandbox.NestingOK(src, MaxNesting); !ok {
		return nil, sandbox.Errorf(sandbox.ESourceLimit,
			"Flatten the program: nest brackets and operators less deeply.",
			fmt.Sprintf("line %d: the program nests deeper than %d levels", line, MaxNesting))
	}
	res := api.Transform(wrapPrefix+src+wrapSuffix, api.TransformOptions{
		Loader:           api.LoaderTS,
		Target:           api.ESNext, // strip types, lower nothing: goja reads modern syntax
		Sourcefile:       srcName,
		Sourcemap:        api.SourceMapExternal,
		SourcesContent:   api.SourcesContentExclude,
		MinifyWhitespace: true, // no re-indentation: output no larger than the input
		Charset:          api.CharsetUTF8,
		LegalComments:    api.LegalCommentsNone,
		LogLevel:         api.LogLevelSilent,
		LogLimit:         1,
		TsconfigRaw:      "{}", // never look for a tsconfig
	})
	if len(res.Errors) > 0 {
		return nil, esbuildError(src, res.Errors)
	}
	code := string(res.Code)
	start := strings.Index(code, outPrefix)
	if start < 0 || !strings.HasSuffix(code, outSuffix) || start+len(outPrefix) > len(code)-len(outSuffix) {
		return nil, sandbox.Errorf(sandbox.ESyntax,
			"Check that every bracket you open is closed, and that no '}' closes more than it opened.",
			"the program closes a bracket it did not open (unbalanced '}' or ')')")
	}
	start += len(outPrefix)
	var m struct {
		Mappings string `json:"mappings"`
	}
	if err := json.Unmarshal(res.Map, &m); err != nil {
		return nil, sandbox.Errorf(sandbox.EInternal, "", "the TypeScript transpiler returned an unreadable source map")
	}
	o := &Output{code: code, start: start, mappings: m.Mappings}
	// Helpers esbuild adds go first: they are declarations, valid at the
	// top of the function body.
	o.JS = code[:start-len(outPrefix)] + code[start:len(code)-len(outSuffix)]
	if start == len(outPrefix) {
		o.JS = code[start : len(code)-len(outSuffix)] // the usual case: share code's memory
	}
	return o, nil
}

// esbuildError turns esbuild's first error into E_SYNTAX at the program's
// position.
func esbuildError(src string, msgs []api.Message) *sandbox.Error {
	m := msgs[0]
	where := "at end of program"
	if loc := m.Location; loc != nil {
		line, col := loc.Line-1, loc.Column+1 // wrapped line n+1 is the program's line n; Column counts bytes from 0
		if line < 1 {
			line, col = 1, 1
		}
		if n := strings.Count(src, "\n") + 1; line <= n {
			where = fmt.Sprintf("line %d, column %d", line, col)
		}
	}
	msg := where + ": " + m.Text
	if len(msgs) > 1 {
		msg += fmt.Sprintf(" (and %d more errors)", len(msgs)-1)
	}
	return sandbox.Errorf(sandbox.ESyntax, syntaxHint, sandbox.Cap(msg, 1024))
}

// Pos maps a position in o.JS (line and byte column, from 1, as the
// JavaScript engine reports them) to the TypeScript program src that o was
// transpiled from. It returns 0, 0 when the position cannot be mapped.
func (o *Output) Pos(src string, line, col int) (int, int) {
	if line < 1 || col < 1 {
		return 0, 0
	}
	// The byte offset of the position in o.JS, then in code (o.JS is code
	// without the wrapper's opening, which follows the helpers, if any).
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(o.JS[off:], '\n')
		if i < 0 {
			return 0, 0
		}
		off += i + 1
	}
	lineLen := strings.IndexByte(o.JS[off:], '\n')
	if lineLen < 0 {
		lineLen = len(o.JS) - off
	}
	off += min(col-1, lineLen)
	if off >= o.start-len(outPrefix) {
		off += len(outPrefix)
	}
	genLine := strings.Count(o.code[:off], "\n")
	ls := strings.LastIndexByte(o.code[:off], '\n') + 1
	gen := o.code[ls:]
	if i := strings.IndexByte(gen, '\n'); i >= 0 {
		gen = gen[:i]
	}
	genByte := off - ls
	sLine, sCol, ok := lookup(o.mappings, genLine, utf16Col(gen, genByte))
	if !ok {
		return 0, 0
	}
	// Line 0 of the wrapped program is the wrapper's; the last is its end.
	n := strings.Count(src, "\n") + 1
	switch {
	case sLine < 1:
		return 1, 1
	case sLine > n:
		last := src[strings.LastIndexByte(src, '\n')+1:]
		return n, len(last) + 1
	}
	return sLine, byteCol(nthLine(src, sLine-1), sCol) + 1
}
