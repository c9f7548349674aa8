package main

import (
	"context"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
)

// BenchmarkExpense runs the Go guest with its module cached (compiled once,
// before the timer): interpreter and compiler. The target is a
// cached module's run within 2x of the JavaScript run of the same workload
// (examples/demo's BenchmarkExpense); `sandcall bench` reports both tiers.
func BenchmarkExpense(b *testing.B) {
	mod := module(b)
	for _, compiler := range []bool{false, true} {
		b.Run(map[bool]string{false: "interpreter", true: "compiler"}[compiler], func(b *testing.B) {
			r := newRunner(b, compiler, nil)
			req := bindings.RunRequest{Program: sandbox.Program{Language: sandbox.WASM, Module: mod}}
			if res := r.Run(context.Background(), req); !res.OK { // compiles and caches
				b.Fatal(res.Error)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if res := r.Run(context.Background(), req); !res.OK || res.Calls.Total != 56 {
					b.Fatal(res.Error, res.Calls)
				}
			}
		})
	}
}
