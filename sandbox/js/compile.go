package js

import (
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"

	"github.com/sandcall/sandcall/sandbox"
)

// The program is compiled as the body of an async function expression. The
// prefix shares the first line with the user's first line, so line numbers
// are the user's; columns on line 1 are shifted by len(wrapPrefix). The suffix
// starts with a newline so that a trailing line comment cannot swallow it.
const (
	wrapPrefix = "(async function(){"
	wrapSuffix = "\n})"
	// srcName names the program in stack traces. It is not a file: source
	// maps are disabled, so no name is ever opened.
	srcName = "program.js"
)

// MaxNesting bounds the bracket nesting (and runs of prefix operators) of a
// program, checked by a linear scan before the recursive parser sees it.
const MaxNesting = 512

// checkSource enforces the size and nesting limits before parsing.
func checkSource(src string, maxBytes int) *sandbox.Error {
	if len(src) > maxBytes {
		return sandbox.Errorf(sandbox.ESourceLimit,
			"Shorten the program: move data into input or fetch it with tools.",
			fmt.Sprintf("the program is %d bytes, over the limit of %d bytes", len(src), maxBytes))
	}
	if line, ok := sandbox.NestingOK(src, MaxNesting); !ok {
		return sandbox.Errorf(sandbox.ESourceLimit,
			"Flatten the program: nest brackets and operators less deeply.",
			fmt.Sprintf("line %d: the program nests deeper than %d levels", line, MaxNesting))
	}
	return nil
}

// compiled is a compiled program and its plan, read from the same syntax
// tree (plan.go).
type compiled struct {
	prog   *goja.Program
	plan   sandbox.Plan
	planOK bool // false: the walk failed; no plan is sent
}

// compileProgram parses and compiles src as the body of an async function,
// and reads its plan from the tree it parsed.
func compileProgram(src string) (*compiled, *sandbox.Error) {
	prg, serr := parseProgram(src)
	if serr != nil {
		return nil, serr
	}
	pl, _, perr := planOf(prg, src)
	p, err := goja.CompileAST(prg, false)
	if err != nil {
		line, col, msg := 0, 0, err.Error()
		if ce, ok := err.(*goja.CompilerSyntaxError); ok {
			msg = ce.Message
			if ce.File != nil {
				pos := ce.File.Position(ce.Offset)
				line, col = pos.Line, pos.Column
			}
		}
		return nil, syntaxError(src, line, col, msg)
	}
	return &compiled{prog: p, plan: pl, planOK: perr == nil}, nil
}

// parseProgram parses src as the body of an async function: E_SYNTAX at
// the user's line when it does not parse, or when it closes the wrapper.
func parseProgram(src string) (*ast.Program, *sandbox.Error) {
	wrapped := wrapPrefix + src + wrapSuffix
	prg, err := parser.ParseFile(nil, srcName, wrapped, 0, parser.WithDisableSourceMaps)
	if err != nil {
		var line, col int
		msg := err.Error()
		if list, ok := err.(parser.ErrorList); ok && len(list) > 0 {
			line, col = list[0].Position.Line, list[0].Position.Column
			msg = list[0].Message
		}
		return nil, syntaxError(src, line, col, msg)
	}
	if !wrapperIntact(prg, len(wrapped)) {
		return nil, sandbox.Errorf(sandbox.ESyntax,
			"Check that every bracket you open is closed, and that no '}' closes more than it opened.",
			"the program closes a bracket it did not open (unbalanced '}' or ')')")
	}
	return prg, nil
}

// wrapperIntact reports whether the parsed wrapped program is exactly one
// async function expression whose body ends at the wrapper's closing brace:
// the user's source cannot have closed the function and added code outside.
func wrapperIntact(prg *ast.Program, n int) bool {
	if len(prg.Body) != 1 {
		return false
	}
	st, ok := prg.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	fn, ok := st.Expression.(*ast.FunctionLiteral)
	if !ok || !fn.Async || fn.Generator || fn.Body == nil {
		return false
	}
	// Idx is 1-based; the closing brace is the second-to-last byte.
	return int(fn.Body.RightBrace) == n-1 && int(fn.Function) == 2
}

// syntaxError builds E_SYNTAX with a position in the user's source.
func syntaxError(src string, line, col int, msg string) *sandbox.Error {
	line, col = userPos(src, line, col)
	// goja prefixes messages with the file name and position; drop them.
	if i := strings.LastIndex(msg, srcName+": "); i >= 0 {
		msg = msg[i+len(srcName)+2:]
	}
	where := "at end of program"
	if line > 0 {
		where = fmt.Sprintf("line %d:%d", line, col)
	}
	return sandbox.Errorf(sandbox.ESyntax,
		"The program is the body of an async function: use await at top level and return the result.",
		fmt.Sprintf("%s: %s", where, msg))
}

// userPos maps a position in the wrapped source to the user's source.
// Positions in the wrapper's suffix are clamped to the end of the program.
func userPos(src string, line, col int) (int, int) {
	if line <= 0 {
		return 0, 0
	}
	lines := strings.Count(src, "\n") + 1
	if line > lines {
		last := src[strings.LastIndexByte(src, '\n')+1:]
		return lines, len(last) + 1
	}
	if line == 1 {
		col -= len(wrapPrefix)
		if col < 1 {
			col = 1
		}
	}
	return line, col
}

// compile returns the compiled program for src, from the cache if it holds it.
// Only successful compilations are cached.
func (e *Engine) compile(src string) (*compiled, *sandbox.Error) {
	key := sha256.Sum256([]byte(src))
	if p, ok := e.cache.Get(key); ok {
		return p, nil
	}
	p, err := compileProgram(src)
	if err != nil {
		return nil, err
	}
	e.cache.Put(key, p)
	return p, nil
}
