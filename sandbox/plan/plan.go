// Package plan reads what a program will call before it runs: the tools
// its text names and how many names it computes at run time
// (sandbox.Plan). JavaScript is read from its syntax tree (sandbox/js's
// Plan); TypeScript is stripped of its types first (sandbox/ts) and its
// lines mapped back; a WebAssembly module gives its imports and the tool
// names its data segments hold, as far as they can be read.
//
// The host (package bindings) plans every program it runs: run_code's
// result carries the plan, approval prompts show it, and the policy's plan
// rules can refuse a program from it before any call is made
// (docs/programs.md). Plans of JavaScript and TypeScript programs are
// kept in a small cache by the hash of their text.
package plan

import (
	"crypto/sha256"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/internal/lru"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/ts"
)

// cacheEntries is how many plans of program texts are kept.
const cacheEntries = 512

var cache = lru.New[sandbox.Plan](cacheEntries, nil)

// Of returns the plan of p. known are the names of the tools, for those a
// WebAssembly module's data holds (a module's strings are not delimited:
// only known names are looked for); nil knows none.
// JavaScript and TypeScript need no catalog. A program that does not
// parse gives its E_SYNTAX (or E_SOURCE_LIMIT for one nested too deeply),
// a module that cannot be read E_MODULE_INVALID. Of does not check the
// program's size: callers apply the source and module limits first.
func Of(p sandbox.Program, known []string) (sandbox.Plan, *sandbox.Error) {
	switch p.Language {
	case sandbox.WASM:
		return Module(p.Module, known)
	case "", sandbox.JavaScript, sandbox.TypeScript:
	default:
		return sandbox.Plan{}, sandbox.Errorf(sandbox.ESyntax, "Use javascript, typescript or wasm.",
			"no plan for language "+sandbox.Cap(string(p.Language), 40))
	}
	key := sha256.Sum256([]byte(string(p.Language) + "\x00" + p.Source))
	if pl, ok := cache.Get(key); ok {
		return clone(pl), nil
	}
	var pl sandbox.Plan
	var err *sandbox.Error
	if p.Language == sandbox.TypeScript {
		pl, err = typeScript(p.Source)
	} else {
		pl, err = js.Plan(p.Source)
	}
	if err != nil {
		return sandbox.Plan{}, err
	}
	cache.Put(key, pl)
	return clone(pl), nil
}

// clone copies a cached plan, so a caller may change its own.
func clone(p sandbox.Plan) sandbox.Plan {
	p.Tools = append(make([]sandbox.PlanTool, 0, len(p.Tools)), p.Tools...)
	p.Imports = append([]string(nil), p.Imports...)
	return p
}

// typeScript plans a TypeScript program: its JavaScript's plan, with each
// line mapped back to the TypeScript source.
func typeScript(src string) (sandbox.Plan, *sandbox.Error) {
	out, err := ts.Transpile(src)
	if err != nil {
		return sandbox.Plan{}, err
	}
	pl, cols, err := js.PlanColumns(out.JS)
	if err != nil {
		return sandbox.Plan{}, err
	}
	for i := range pl.Tools {
		line, _ := out.Pos(src, pl.Tools[i].Line, cols[i])
		pl.Tools[i].Line = line
	}
	return pl, nil
}
