package process

import (
	"reflect"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ELF constants of the program headers codeRanges reads.
const (
	atPHDR  = 3 // auxiliary vector: the program headers' address
	atPHENT = 4 // the size of one
	atPHNUM = 5 // their number
	ptLoad  = 1
	ptPhdr  = 6
	pfX     = 1
	pfW     = 2
)

// phdr64 is an ELF64 program header.
type phdr64 struct {
	Type, Flags                             uint32
	Off, Vaddr, Paddr, Filesz, Memsz, Align uint64
}

// codeRanges returns the page ranges of this process's executable that are
// loaded read-only (its code, read-only data and function tables: the bulk
// of a Go binary): the whole pages of its PT_LOAD segments without write
// permission, from the program headers the kernel maps with the
// executable (the auxiliary vector says where; no file is read, so it works
// in a confined worker). A read-only segment is never written, not even by
// the dynamic loader (relocated data sits in a writable segment), so its
// pages are the file's. nil if the headers are not those of a 64-bit ELF
// executable holding this very code.
func codeRanges() [][2]uintptr {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return nil
	}
	auxv, err := unix.Auxv()
	if err != nil {
		return nil
	}
	var at, ent, num uintptr
	for _, kv := range auxv {
		switch kv[0] {
		case atPHDR:
			at = kv[1]
		case atPHENT:
			ent = kv[1]
		case atPHNUM:
			num = kv[1]
		}
	}
	if at == 0 || num == 0 || num > 256 || ent != unsafe.Sizeof(phdr64{}) {
		return nil
	}
	// The headers are in the executable's first segment, mapped for the
	// life of the process: never Go memory. (Converted through a pointer
	// variable: the address came from the kernel, not from Go.)
	p := *(*unsafe.Pointer)(unsafe.Pointer(&at))
	hs := unsafe.Slice((*phdr64)(p), num)
	// The load bias: zero for a fixed-address executable, the offset of a
	// position-independent one.
	var bias uintptr
	for _, h := range hs {
		if h.Type == ptPhdr {
			bias = at - uintptr(h.Vaddr)
		}
	}
	page := uintptr(syscall.Getpagesize())
	self := reflect.ValueOf(codeRanges).Pointer()
	var out [][2]uintptr
	found := false
	for _, h := range hs {
		if h.Type != ptLoad || h.Flags&pfW != 0 {
			continue
		}
		// Whole pages only: a page shared with a writable segment is kept.
		lo := (bias + uintptr(h.Vaddr) + page - 1) &^ (page - 1)
		hi := (bias + uintptr(h.Vaddr+h.Memsz)) &^ (page - 1)
		if hi <= lo {
			continue
		}
		out = append(out, [2]uintptr{lo, hi})
		if h.Flags&pfX != 0 && self >= lo && self < hi {
			found = true
		}
	}
	if !found {
		return nil // not the headers of the code that runs
	}
	return out
}

// dropPages removes the pages of ranges from this process's page table
// (madvise MADV_DONTNEED); they stay in the page cache and map again from
// there when touched.
func dropPages(ranges [][2]uintptr) {
	for _, r := range ranges {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, r[0], r[1]-r[0], syscall.MADV_DONTNEED)
	}
}
