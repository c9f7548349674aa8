package ts

import (
	"strings"
	"testing"

	"github.com/sandcall/sandcall/internal/testenv"
)

// BenchmarkTranspile measures esbuild on a model-sized program and on one
// near the 256 KiB source limit.
func BenchmarkTranspile(b *testing.B) {
	benchProgram := testenv.Workload(b, "expense/program.ts")
	big := strings.Repeat("{\n"+strings.ReplaceAll(benchProgram, "return ", "void ")+"}\n", (250<<10)/(len(benchProgram)+4))
	for _, bc := range []struct {
		name, src string
	}{{"model", benchProgram}, {"256KiB", big}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.src)))
			for b.Loop() {
				if _, err := Transpile(bc.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
