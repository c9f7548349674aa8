//go:build !wasip1

package main

import (
	"fmt"
	"os"
)

// Outside wasip1 the program has no host to call: it says how to build it.
// (The file exists so that `go build ./...` and `go vet ./...` on any
// platform still compile and vet summary.go.)
func main() {
	fmt.Fprintln(os.Stderr, "expense/wasm is a sandcall WebAssembly guest: build it with GOOS=wasip1 GOARCH=wasm")
	os.Exit(2)
}
