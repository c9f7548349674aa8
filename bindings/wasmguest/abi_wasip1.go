//go:build wasip1

package wasmguest

import (
	"runtime"
	"unsafe"
)

// The imports of the "sandcall" host module, ABI version 1
// (bindings/abi.md). Pointers are offsets into this module's linear
// memory; the Go values behind them are kept alive across each call (Go's
// collector does not move objects, so a live value stays where it is).

//go:wasmimport sandcall abi_version
func sandcallABIVersion() int32

//go:wasmimport sandcall call
func sandcallCall(namePtr unsafe.Pointer, nameLen uint32, argsPtr unsafe.Pointer, argsLen uint32) int32

//go:wasmimport sandcall call_async
func sandcallCallAsync(namePtr unsafe.Pointer, nameLen uint32, argsPtr unsafe.Pointer, argsLen uint32) int32

//go:wasmimport sandcall wait
func sandcallWait(handle int32) int32

//go:wasmimport sandcall result_len
func sandcallResultLen(handle int32) int32

//go:wasmimport sandcall result_read
func sandcallResultRead(handle int32, bufPtr unsafe.Pointer, bufLen uint32) int32

//go:wasmimport sandcall input_len
func sandcallInputLen() int32

//go:wasmimport sandcall input_read
func sandcallInputRead(bufPtr unsafe.Pointer, bufLen uint32) int32

//go:wasmimport sandcall set_result
func sandcallSetResult(ptr unsafe.Pointer, n uint32) int32

//go:wasmimport sandcall progress
func sandcallProgress(ptr unsafe.Pointer, n uint32) int32

//go:wasmimport sandcall log
func sandcallLog(ptr unsafe.Pointer, n uint32)

// wasmHost is the host module itself.
type wasmHost struct{}

var abi host = wasmHost{}

func strPtr(s string) unsafe.Pointer   { return unsafe.Pointer(unsafe.StringData(s)) }
func bytesPtr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

func (wasmHost) version() int32 { return sandcallABIVersion() }

func (wasmHost) call(name string, args []byte) int32 {
	h := sandcallCall(strPtr(name), uint32(len(name)), bytesPtr(args), uint32(len(args)))
	runtime.KeepAlive(name)
	runtime.KeepAlive(args)
	return h
}

func (wasmHost) callAsync(name string, args []byte) int32 {
	h := sandcallCallAsync(strPtr(name), uint32(len(name)), bytesPtr(args), uint32(len(args)))
	runtime.KeepAlive(name)
	runtime.KeepAlive(args)
	return h
}

func (wasmHost) wait(handle int32) int32      { return sandcallWait(handle) }
func (wasmHost) resultLen(handle int32) int32 { return sandcallResultLen(handle) }

func (wasmHost) resultRead(handle int32, buf []byte) int32 {
	n := sandcallResultRead(handle, bytesPtr(buf), uint32(len(buf)))
	runtime.KeepAlive(buf)
	return n
}

func (wasmHost) inputLen() int32 { return sandcallInputLen() }

func (wasmHost) inputRead(buf []byte) int32 {
	n := sandcallInputRead(bytesPtr(buf), uint32(len(buf)))
	runtime.KeepAlive(buf)
	return n
}

func (wasmHost) setResult(b []byte) int32 {
	st := sandcallSetResult(bytesPtr(b), uint32(len(b)))
	runtime.KeepAlive(b)
	return st
}

func (wasmHost) progress(b []byte) int32 {
	st := sandcallProgress(bytesPtr(b), uint32(len(b)))
	runtime.KeepAlive(b)
	return st
}

func (wasmHost) log(b []byte) {
	sandcallLog(bytesPtr(b), uint32(len(b)))
	runtime.KeepAlive(b)
}
