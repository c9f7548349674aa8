package ts_test

import (
	"context"
	"fmt"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/ts"
)

// A TypeScript program runs on the JavaScript engine; its errors point at
// the TypeScript.
func Example() {
	ex := ts.New(ts.Config{JS: js.New(js.Config{})})
	run := func(src string) {
		out := ex.Execute(context.Background(), &sandbox.Job{
			Program: sandbox.Program{Language: sandbox.TypeScript, Source: src},
			Limits:  sandbox.DefaultLimits(),
		}, nil)
		if out.Err != nil {
			fmt.Println(out.Err.Code, out.Err.Message)
			return
		}
		fmt.Println(string(out.Value))
	}
	run("interface P { x: number }\nconst p: P = { x: 41 }\nreturn p.x + 1")
	run("interface P { x: number }\nconst p: P = { x: 41 } oops")
	run("type T = string\n\nthrow new Error('no' as T)")
	// Output:
	// 42
	// E_SYNTAX line 2, column 24: Expected ";" but found "oops"
	// E_GUEST_ERROR Uncaught Error: no (line 3:7)
}

// Transpile alone: the JavaScript the engine runs.
func ExampleTranspile() {
	out, err := ts.Transpile("const n: number = 1\nreturn n as number")
	fmt.Println(out.JS, err == nil)
	// Output:
	// const n=1;return n true
}
