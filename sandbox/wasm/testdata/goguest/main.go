// Command goguest is a Go WebAssembly guest written directly against the
// sandcall ABI (bindings/abi.md) with go:wasmimport: it reads its input,
// calls tool "ping" with it, logs, and sets the result. The tests build it
// with the installed Go (GOOS=wasip1 GOARCH=wasm) to check that a real Go
// module passes the pre-validator and runs.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"unsafe"
)

//go:wasmimport sandcall call
func call(namePtr, nameLen, argsPtr, argsLen uint32) int32

//go:wasmimport sandcall wait
func wait(h int32) int32

//go:wasmimport sandcall result_len
func resultLen(h int32) int32

//go:wasmimport sandcall result_read
func resultRead(h int32, ptr, n uint32) int32

//go:wasmimport sandcall input_len
func inputLen() int32

//go:wasmimport sandcall input_read
func inputRead(ptr, n uint32) int32

//go:wasmimport sandcall set_result
func setResult(ptr, n uint32) int32

func ptr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&b[0])))
}

func main() {
	in := make([]byte, inputLen())
	inputRead(ptr(in), uint32(len(in)))
	name := []byte("ping")
	h := call(ptr(name), uint32(len(name)), ptr(in), uint32(len(in)))
	status := wait(h)
	out := make([]byte, resultLen(h))
	resultRead(h, ptr(out), uint32(len(out)))
	fmt.Println("status", status)
	var n any
	_ = json.Unmarshal(out, &n)
	res, _ := json.Marshal(map[string]any{"status": status, "result": n})
	setResult(ptr(res), uint32(len(res)))
	os.Exit(0)
}
