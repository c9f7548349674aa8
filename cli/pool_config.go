package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// defaultWorkerReuse is how many runs of one principal a worker serves
// before it is replaced (pool.worker_reuse, --worker-reuse). See
// RATIONALE.md, "Why are workers reused within a principal, 16 runs at most?".
const defaultWorkerReuse = 16

// poolConfig is the `pool:` block of sandcall.yaml: the process tier's
// capacity and its sharing between principals. Zero values are the
// defaults of process.Config.
type poolConfig struct {
	// WorkerReuse is how many runs of one principal a worker serves (1: one
	// run per worker). Default 16.
	WorkerReuse int `yaml:"worker_reuse"`
	// MaxRunning is how many runs execute at once, all principals
	// together. Default 4 per CPU.
	MaxRunning int `yaml:"max_running"`
	// Queue is how many runs may wait for a slot. Default 128.
	Queue int `yaml:"queue"`
	// QueueTimeout is how long a run may wait before E_BUSY. Default 30s.
	QueueTimeout string `yaml:"queue_timeout"`
	// MaxWorkerRSSMB is the resident memory past which a worker is not
	// reused. Default 192.
	MaxWorkerRSSMB int `yaml:"max_worker_rss_mb"`

	queueTimeout time.Duration
}

// check validates the block and parses its durations.
func (p *poolConfig) check() error {
	if p.WorkerReuse < 0 || p.MaxRunning < 0 || p.Queue < 0 || p.MaxWorkerRSSMB < 0 {
		return fmt.Errorf("pool: values must not be negative")
	}
	if p.QueueTimeout != "" {
		d, err := time.ParseDuration(p.QueueTimeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("pool.queue_timeout: want a duration such as 30s, got %q", p.QueueTimeout)
		}
		p.queueTimeout = d
	}
	return nil
}

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
