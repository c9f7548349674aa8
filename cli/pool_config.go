package cli

import (
	"os"
	"path/filepath"
)

// defaultWorkerReuse is how many runs of one principal a worker serves
// before it is replaced (pool.worker_reuse, --worker-reuse). See
// RATIONALE.md, "Why are workers reused within a principal?". 64 rather than
// 16: under sustained load (ten HTTP clients sending small runs, bench
// load) a worker start per 16 runs took more CPU than a 2-core machine
// had to spare, and runs waited for fresh workers: the process tier served
// 0.44-0.53x the in-process runs a second with p99 4.4-6.1x; at 32,
// 0.62-0.71x and 1.6-3.1x; at 64, 0.94-1.00x and 0.79-0.85x (two
// interleaved rounds). A worker serves one principal whatever the count.
const defaultWorkerReuse = 64

// probeCacheDir is where `sandcall run` keeps the confinement probe's
// report (see confine.ProbeCached): $XDG_CACHE_HOME/sandcall or
// ~/.cache/sandcall; "" (no cache) if there is no such directory.
func probeCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "sandcall")
}
