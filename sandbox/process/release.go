package process

import (
	"runtime/debug"
	"sync"
)

// executableCode is codeRanges, read once.
var executableCode = sync.OnceValue(codeRanges)

// ReleaseMemory gives back to the system what this process holds and does
// not use now: it collects, returns the free heap (debug.FreeOSMemory),
// and, on Linux, drops its mappings of the pages of its own executable that
// are read-only and unchanged (code, read-only data and function tables:
// most of a Go binary's resident size, faulted in by the start-up of every
// package it links). Dropped pages stay in the page cache and map again,
// without reading the disk, when they are next touched. Call it when idle:
// it costs a collection, and the pages then touched again cost a minor
// fault each. A worker calls it by itself when it has waited
// WorkerConfig.IdleRelease for a job; a server may call it when at rest.
func ReleaseMemory() {
	debug.FreeOSMemory()
	dropPages(executableCode())
}
