// Package plan reads what a program will call before it runs: the tools
// its text names and how many names it computes at run time
// (sandbox.Plan). JavaScript is read from its syntax tree (sandbox/js's
// Plan); TypeScript is stripped of its types first (sandbox/ts) and its
// lines mapped back; a WebAssembly module gives its imports and the tool
// names its data segments hold, as far as they can be read.
//
// The command line (`sandcall plan`), program files and saved programs are
// planned with Of; a program a server runs is planned by its engine, from
// the tree it parses to compile it (Job.SendPlan, sandbox.PlanCall), so
// that the server never parses a program: esbuild's TypeScript parser has
// no bounded running time (sandbox/ts), and Of transpiles TypeScript. The
// host plans a WebAssembly module itself, with Module. Plans of JavaScript
// and TypeScript programs are kept in a small cache by the hash of their
// text.
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
		pl, err = ts.Plan(p.Source)
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
