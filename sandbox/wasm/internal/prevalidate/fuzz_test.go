package prevalidate

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzPrevalidate checks that no input makes Check or CheckAndInstrument
// panic, and that an instrumented module checks again.
func FuzzPrevalidate(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*.wasm"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	all := func(Import) bool { return true }
	f.Fuzz(func(t *testing.T, b []byte) {
		lim := Defaults()
		out, err := CheckAndInstrument(b, lim, all)
		if err != nil {
			return
		}
		if err := Check(out, lim, all); err != nil {
			t.Fatalf("instrumented module fails the check: %v", err)
		}
	})
}
