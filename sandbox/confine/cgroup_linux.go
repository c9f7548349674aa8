package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Cgroup is one worker's cgroup v2 directory. The parent makes it before
// starting the worker, puts the worker in it atomically at clone time
// (Apply), reads its OOM count after the worker exits, and removes it.
type Cgroup struct {
	dir string
	fd  int
}

// ErrNoCgroup is returned by NewCgroup when the cgroup layer is not active.
var ErrNoCgroup = errors.New("confine: cgroup layer not active")

// NewCgroup makes a child cgroup called name under the delegated directory,
// with memory.max = memoryMax, memory.swap.max = 0 and pids.max = pids
// (a zero value leaves that limit at "max"). memoryMax bounds resident
// memory, page cache included, so pass the job's limit with room for the
// runtime, e.g. 1.25x.
func (r Report) NewCgroup(name string, memoryMax int64, pids int) (*Cgroup, error) {
	if !r.Active(LayerCgroup) || r.cgroupDir == "" {
		return nil, ErrNoCgroup
	}
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("confine: bad cgroup name %q", name)
	}
	dir := filepath.Join(r.cgroupDir, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	cg := &Cgroup{dir: dir, fd: -1}
	write := func(file, v string) error {
		return os.WriteFile(filepath.Join(dir, file), []byte(v), 0)
	}
	var err error
	if memoryMax > 0 {
		err = errors.Join(err, write("memory.max", strconv.FormatInt(memoryMax, 10)))
		if _, statErr := os.Stat(filepath.Join(dir, "memory.swap.max")); statErr == nil {
			err = errors.Join(err, write("memory.swap.max", "0"))
		}
	}
	if pids > 0 {
		err = errors.Join(err, write("pids.max", strconv.Itoa(pids)))
	}
	if err == nil {
		cg.fd, err = unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		cg.Remove()
		return nil, fmt.Errorf("confine: cgroup %s: %w", dir, err)
	}
	return cg, nil
}

// Apply makes the worker started with a start in this cgroup from its first
// instruction (clone3 with CLONE_INTO_CGROUP).
func (cg *Cgroup) Apply(a *syscall.SysProcAttr) {
	a.UseCgroupFD = true
	a.CgroupFD = cg.fd
}

// OOMKills returns how many processes of the cgroup the kernel OOM-killed
// (memory.events oom_kill): non-zero means E_MEMORY.
func (cg *Cgroup) OOMKills() (int, error) {
	b, err := os.ReadFile(filepath.Join(cg.dir, "memory.events"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, nil
}

// Remove deletes the cgroup; call it after the worker was reaped. It kills
// anything left in it first (cgroup.kill), then retries briefly while the
// kernel finishes tearing the processes down.
func (cg *Cgroup) Remove() error {
	if cg.fd >= 0 {
		unix.Close(cg.fd)
		cg.fd = -1
	}
	_ = os.WriteFile(filepath.Join(cg.dir, "cgroup.kill"), []byte("1"), 0)
	var err error
	for range 50 {
		if err = unix.Rmdir(cg.dir); err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("confine: remove cgroup %s: %w", cg.dir, err)
}
