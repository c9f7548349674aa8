package expense

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"sync"
)

// The workload's program as WebAssembly, built and committed so that a
// binary can run them from any directory (TestModuleGoMatchesSource and
// TestModuleCMatchesSource rebuild them and compare, where the toolchain is
// installed). Regenerate both with `go generate ./examples/expense`.
//
//go:generate sh -c "GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags='-s -w' -o wasm/expense.wasm ./wasm && gzip -9nf wasm/expense.wasm"
//go:generate clang --target=wasm32-wasi -O2 -nostartfiles -Wl,--no-entry -Wl,--strip-all -o c/expense.wasm c/expense.c

// ModuleC is the workload's C guest (examples/expense/c): 45 KB, no WASI,
// the fast path for WebAssembly. Its result is ReferenceSummary.
//
//go:embed c/expense.wasm
var ModuleC []byte

//go:embed wasm/expense.wasm.gz
var moduleGoGz []byte

var moduleGo = sync.OnceValue(func() []byte {
	zr, err := gzip.NewReader(bytes.NewReader(moduleGoGz))
	if err != nil {
		panic("expense: the embedded Go guest: " + err.Error())
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		panic("expense: the embedded Go guest: " + err.Error())
	}
	return b
})

// ModuleGo returns the workload's Go guest (examples/expense/wasm, built
// with GOOS=wasip1 GOARCH=wasm go build -trimpath -ldflags='-s -w'; 3.4 MB,
// embedded gzip-compressed). Its result is ReferenceSummary. The caller
// must not modify the bytes.
func ModuleGo() []byte { return moduleGo() }
