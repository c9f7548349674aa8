package confine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ProbeCached is Probe with its report kept in dir, so that a command that
// starts one worker (`sandcall run`) does not start a probe worker first
// every time. The cached report is keyed by everything it depends on: the
// binary (device, inode, size, modification time), the kernel release, the
// effective user and group, and cfg. cached reports whether the report came
// from the cache.
//
// A cached report fails closed: a worker applies every layer the report
// names and refuses to serve if one fails (Enter, RestrictSelf, or the
// kernel refusing a namespace at start), so a stale report can make a run
// fail, never run with less confinement. The caller then calls ForgetProbe
// and probes again. dir is created (mode 0700) if missing; a directory, or
// a file in it, that is a symlink, not owned by this user or writable by
// others is not used (the probe runs, uncached).
func ProbeCached(cfg Config, dir string) (r Report, cached bool) {
	path, err := probeCachePath(cfg, dir)
	if err != nil {
		return Probe(cfg), false
	}
	if b, err := readPrivate(path); err == nil {
		if r, err := unmarshalReport(b); err == nil {
			return r, true
		}
	}
	r = Probe(cfg)
	if b, err := marshalReport(r); err == nil {
		tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
		if os.WriteFile(tmp, b, 0o600) == nil {
			_ = os.Rename(tmp, path)
		}
		_ = os.Remove(tmp)
	}
	return r, false
}

// ForgetProbe removes the report ProbeCached keeps for cfg in dir.
func ForgetProbe(cfg Config, dir string) {
	if path, err := probeCachePath(cfg, dir); err == nil {
		_ = os.Remove(path)
	}
}

func probeCachePath(cfg Config, dir string) (string, error) {
	if dir == "" {
		return "", errors.New("no cache directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := checkPrivate(dir, true); err != nil {
		return "", err
	}
	exe := cfg.Executable
	if exe == "" {
		exe = SelfExe
	}
	var st unix.Stat_t
	if err := unix.Stat(exe, &st); err != nil {
		return "", err
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", err
	}
	h := sha256.New()
	key, _ := json.Marshal(struct {
		Dev, Ino     uint64
		Size         int64
		Mtime        int64
		Kernel       string
		UID, GID     int
		Disable      []Layer
		CgroupParent string
		Args         []string
		Exe, Version string
	}{uint64(st.Dev), st.Ino, st.Size, st.Mtim.Nano(), unix.ByteSliceToString(u.Release[:]),
		os.Geteuid(), os.Getegid(), cfg.Disable, cfg.CgroupParent, cfg.WorkerArgs, cfg.Executable, "2"})
	h.Write(key)
	return filepath.Join(dir, "probe-"+hex.EncodeToString(h.Sum(nil))[:32]+".json"), nil
}

// checkPrivate refuses a symlink, a file of another user, or one writable
// by group or others.
func checkPrivate(path string, isDir bool) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%s is a symlink", path)
	case fi.IsDir() != isDir:
		return fmt.Errorf("%s: unexpected file type", path)
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s is not owned by this user", path)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s is writable by others", path)
	}
	return nil
}

func readPrivate(path string) ([]byte, error) {
	if err := checkPrivate(path, false); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// cachedReport is a Report as the cache stores it.
type cachedReport struct {
	Layers    []Status
	Landlock  string
	ABI       int
	CgroupDir string
	NSEarly   bool `json:",omitempty"`
}

func marshalReport(r Report) ([]byte, error) {
	return json.Marshal(cachedReport{Layers: r.Layers, Landlock: r.landlock, ABI: r.abi, CgroupDir: r.cgroupDir, NSEarly: r.nsEarly})
}

func unmarshalReport(b []byte) (Report, error) {
	var c cachedReport
	if err := json.Unmarshal(b, &c); err != nil {
		return Report{}, err
	}
	if len(c.Layers) != len(Layers) {
		return Report{}, errors.New("cached probe: wrong layer count")
	}
	for i, s := range c.Layers {
		if s.Layer != Layers[i] {
			return Report{}, errors.New("cached probe: unknown layer")
		}
	}
	switch c.Landlock {
	case "", landlockAllThreads, landlockExec, landlockEarly:
	default:
		return Report{}, errors.New("cached probe: bad landlock mode")
	}
	if strings.ContainsAny(c.CgroupDir, "\x00\n") {
		return Report{}, errors.New("cached probe: bad cgroup directory")
	}
	return Report{Layers: c.Layers, landlock: c.Landlock, abi: c.ABI, cgroupDir: c.CgroupDir, nsEarly: c.NSEarly}, nil
}
