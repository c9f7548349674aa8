//go:build !linux

package confine

import (
	"errors"
	"runtime"
	"syscall"
)

// SelfExe is the path a worker should be started from.
const SelfExe = "" // os.Executable() on this OS

// Probe reports every layer but the process group unavailable: the
// confinement layers are implemented for Linux only.
func Probe(cfg Config) Report {
	var r Report
	for _, l := range Layers {
		r.set(l, false, "not implemented on "+runtime.GOOS)
	}
	return r
}

// SysProcAttr returns no attributes on this OS.
func (r Report) SysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// Environ returns the environment entries a worker needs to apply r.
func (r Report) Environ() []string { return nil }

// Enter does nothing on this OS.
func Enter() (Report, error) { return Report{}, nil }

// RestrictSelf does nothing on this OS: no layer is ever active.
func RestrictSelf(r Report, lim Limits) error { return nil }

// Cgroup is unavailable on this OS.
type Cgroup struct{}

// ErrNoCgroup is returned by NewCgroup when the cgroup layer is not active.
var ErrNoCgroup = errors.New("confine: cgroup layer not active")

// NewCgroup always fails on this OS.
func (r Report) NewCgroup(name string, memoryMax int64, pids int) (*Cgroup, error) {
	return nil, ErrNoCgroup
}

// Apply does nothing.
func (cg *Cgroup) Apply(a *syscall.SysProcAttr) {}

// OOMKills returns 0.
func (cg *Cgroup) OOMKills() (int, error) { return 0, nil }

// Remove does nothing.
func (cg *Cgroup) Remove() error { return nil }

// ProbeCached is Probe on this OS: there is nothing worth caching.
func ProbeCached(cfg Config, dir string) (r Report, cached bool) { return Probe(cfg), false }

// ForgetProbe does nothing on this OS.
func ForgetProbe(cfg Config, dir string) {}
