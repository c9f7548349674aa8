package cli

import (
	"os"
	"path/filepath"
)

// defaultWorkerReuse is how many runs of one principal a worker serves
// before it is replaced (pool.worker_reuse, --worker-reuse). See
// RATIONALE.md, "Why are workers reused within a principal, 16 runs at most?".
const defaultWorkerReuse = 16

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
