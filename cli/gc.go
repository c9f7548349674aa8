package cli

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the collector's target (GOGC) unless the environment
// sets GOGC. The server's live heap is small (tens of MB), and each upstream
// call allocates several 32 KiB decode buffers in the MCP SDK's JSON reader,
// so at Go's default of 100 the server collects several times per 100-call
// fan-out: a quarter of its CPU was the collector's mark phase (perf). At
// 400 the fan-out took 20-48% less time for 14-30 MB more peak RSS (RATIONALE.md,
// "Why does sandcall run its own process at GOGC=400?"). Workers set GOGC=off
// themselves.
const defaultGCPercent = 400

// setGCPercent applies defaultGCPercent unless GOGC is in the environment.
func setGCPercent() {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(defaultGCPercent)
	}
}
