package cli

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/sandcall/sandcall/sandbox/process"
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

// How a server finds itself at rest: it has allocated less than
// quietAllocs a second for quietFor. At rest it releases memory once, and
// again if its resident memory grows by regrowth meanwhile (code mapped
// again by what little it did).
const (
	quietAllocs = 256 << 10
	quietFor    = 2 * time.Second
	regrowth    = 4 << 20
)

// releaseWhenIdle gives back the memory the server holds and does not use
// (process.ReleaseMemory: the free heap, which GOGC=400 lets grow to five
// times the live heap, and the pages of the binary that start-up touched)
// each time it comes to rest, until ctx ends. A server at rest allocates
// next to nothing; one serving runs never stops allocating long enough for
// this to cost it anything.
func releaseWhenIdle(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	last := sample[0].Value.Uint64()
	var quiet time.Duration
	releasedAt := int64(-1) // resident bytes after the last release at this rest; -1: none yet
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		now := sample[0].Value.Uint64()
		if now-last >= quietAllocs {
			quiet, releasedAt = 0, -1
		} else if quiet += time.Second; quiet >= quietFor {
			if rss := residentBytes(); releasedAt < 0 || rss > releasedAt+regrowth {
				process.ReleaseMemory()
				releasedAt = residentBytes()
				metrics.Read(sample) // the release's own allocations are not activity
				now = sample[0].Value.Uint64()
			}
		}
		last = now
	}
}

// residentBytes returns this process's resident memory, from
// /proc/self/statm (0 where there is none).
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
