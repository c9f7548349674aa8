// Package ts runs TypeScript programs: it strips their types with esbuild's
// Go API and hands the JavaScript to a JavaScript executor, mapping error
// positions back to the submitted source.
//
// A TypeScript program is, like a JavaScript one, the body of an async
// function: `await` works at top level and `return` gives the result. Types
// are stripped, not checked: a program that would fail `tsc` still runs if it
// is valid syntax. TypeScript that emits code (enums, parameter properties,
// class fields) works; `import`, `export` and `namespace` do not (there are no
// modules: tools are the `tools` global).
//
//	ex := ts.New(ts.Config{JS: js.New(js.Config{})})
//	out := ex.Execute(ctx, &sandbox.Job{Program: sandbox.Program{
//		Language: sandbox.TypeScript,
//		Source:   "const n: number = 41\nreturn n + 1",
//	}, Limits: sandbox.DefaultLimits()}, host)
//
// # Positions
//
// A syntax error is reported at the line and column of the submitted source
// ("line 3, column 14: Expected \";\" but found \"x\""). esbuild reprints the
// program, so positions the JavaScript engine reports (an uncaught error's
// "(line L:C)", a syntax error goja finds in esbuild's output) are mapped
// back through esbuild's source map. Columns count bytes from 1, as the
// JavaScript engine's do. Positions inside log entries (an error's stack a
// program prints itself) are not rewritten.
//
// # Security
//
// esbuild runs its Transform API only: no bundling, no plugins, no file
// system (esbuild gives Transform an empty in-memory one), no tsconfig read
// from disk. The JavaScript it produces is compiled and run by the
// JavaScript executor under the job's limits like any other program; its
// checks (the wrapper cannot be escaped, nesting, size) apply to it too.
//
// # Limits
//
// The source limit applies to the submitted TypeScript, and so does a
// bracket-nesting limit (MaxNesting) that keeps esbuild's recursive parser
// shallow. esbuild's TypeScript parser backtracks, and some inputs take it
// superlinear time (a chain of 16,000 `a < a < ...` took 80 s of CPU on
// the development machine; 60,000 fit in the source limit); it cannot be
// interrupted. The transpile therefore counts against the run's wall-time
// limit: when the limit passes first, the run ends with E_TIMEOUT and the
// transpile goroutine is abandoned (it keeps its CPU until it finishes).
// Config.MaxTranspiles bounds the transpiles running at once, abandoned
// ones included, so that they cannot take every core; a run that gets no
// slot by its deadline ends with E_BUSY. Because of all this, the process
// tier transpiles inside the worker, which is killed at the deadline, and
// not in the server; in-process execution is not a security boundary.
package ts
