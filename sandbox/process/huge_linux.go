package process

import (
	"runtime"
	"syscall"
	"unsafe"
)

// madvHugepage is MADV_HUGEPAGE.
const madvHugepage = 14

// hugeHeap makes the next n bytes of the worker's heap fault in as
// transparent huge pages (2 MiB) where the system allows it (THP enabled
// "always" or "madvise"): it allocates one n-byte block, which takes fresh,
// untouched address space at the start of a worker, advises its whole huge
// pages MADV_HUGEPAGE and drops it; the first collection frees it and the
// jobs allocate from it. A job's first touch of fresh heap then costs a
// fault per 2 MiB instead of one per 4 KiB: on the 2-core VMs this is
// measured on, touching 64 MiB took 35-70 ms in 4 KiB pages and 9-23 ms in
// huge pages, and a worker that faulted in its heap ahead of its jobs (the
// former warm-up) spent that on every start. Freed memory still goes back
// to the system (a huge page is split where part of it is released).
func hugeHeap(n int) {
	b := make([]byte, n)
	const huge = 2 << 20
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	a := (lo + huge - 1) &^ (huge - 1)
	z := (lo + uintptr(n)) &^ (huge - 1)
	if z > a {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, a, z-a, madvHugepage)
	}
	runtime.KeepAlive(b)
}
