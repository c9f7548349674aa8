package confine

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"strconv"

	"golang.org/x/sys/unix"
)

// RLIMIT_AS must allow for what the Go runtime has already reserved, which is
// large and mostly untouched: a worker of this repository's test binary
// (cgo) has VmSize ~1.5 GiB and VmRSS ~5 MiB right after start-up, ~1.26 GiB
// built with CGO_ENABLED=0, ~1.30 GiB with cgo and MALLOC_ARENA_MAX=1 (each
// glibc malloc arena reserves 64 MiB; Environ sets MALLOC_ARENA_MAX=1). Most
// of it is PROT_NONE reservations for the page allocator's summaries and the
// first heap arena. The size depends on binary, cgo and thread count, so
// RestrictSelf measures it (VmSize at that moment) instead of assuming it,
// and sets
//
//	RLIMIT_AS = VmSize + MemoryBytes + HeadroomBytes
//
// Measured on linux/amd64, kernel 6.18, Go 1.26, MemoryBytes 256 MiB,
// GOMEMLIMIT 256 MiB, a program growing live data in 1 MiB pieces plus 8 MiB
// of garbage every 64 MiB:
//
//	headroom  peak RSS at death   200 MiB live + garbage
//	   0 MiB  252 MiB             dies (out of memory)
//	  32 MiB  282 MiB             survives, 219 MiB RSS
//	  64 MiB  307 MiB (1.20x)     survives, 219 MiB RSS
//
// hence DefaultHeadroom = 64 MiB: a program well under its limit runs, one
// that exceeds it dies with "fatal error: out of memory" within 1.25x. A
// single 4 GiB allocation (new Array(2**28)) fails at once with ~5 MiB RSS.

// statusFD is /proc/self/status, opened by Enter before Landlock closes the
// filesystem, so that RestrictSelf can read VmSize; -1 if not open.
var statusFD = -1

// vmSize returns the process's current address space size (VmSize).
func vmSize() (int64, error) {
	fd := statusFD
	if fd < 0 {
		var err error
		if fd, err = unix.Open("/proc/self/status", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			return 0, fmt.Errorf("VmSize: %w", err)
		}
		defer unix.Close(fd)
	}
	buf := make([]byte, 8192)
	n, err := unix.Pread(fd, buf, 0)
	if err != nil {
		return 0, fmt.Errorf("VmSize: %w", err)
	}
	_, rest, ok := bytes.Cut(buf[:n], []byte("\nVmSize:"))
	if !ok {
		return 0, fmt.Errorf("VmSize: not in /proc/self/status")
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) != 2 || string(f[1]) != "kB" {
		return 0, fmt.Errorf("VmSize: bad line %q", line)
	}
	kb, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("VmSize: %w", err)
	}
	return kb << 10, nil
}

// setRlimits applies lim to this process (rlimits are per process, so one
// call covers every thread).
func setRlimits(lim Limits) error {
	set := func(name string, res int, v uint64) error {
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("setrlimit %s=%d: %w", name, v, err)
		}
		return nil
	}
	files := lim.OpenFiles
	if files <= 0 {
		files = 16
	}
	if err := set("NOFILE", unix.RLIMIT_NOFILE, uint64(files)); err != nil {
		return err
	}
	// FSIZE 0: any write that would grow a regular file fails with EFBIG
	// (the Go runtime ignores SIGXFSZ). Pipes are unaffected.
	if err := set("FSIZE", unix.RLIMIT_FSIZE, 0); err != nil {
		return err
	}
	if err := set("CORE", unix.RLIMIT_CORE, 0); err != nil {
		return err
	}
	if err := set("MEMLOCK", unix.RLIMIT_MEMLOCK, 0); err != nil {
		return err
	}
	if err := set("MSGQUEUE", unix.RLIMIT_MSGQUEUE, 0); err != nil {
		return err
	}
	if lim.CPUSeconds > 0 {
		// Soft == hard: the kernel sends SIGKILL, not SIGXCPU (which the
		// Go runtime would ignore).
		if err := set("CPU", unix.RLIMIT_CPU, uint64(lim.CPUSeconds)); err != nil {
			return err
		}
	}
	if lim.MemoryBytes > 0 {
		head := lim.HeadroomBytes
		if head <= 0 {
			head = DefaultHeadroom
		}
		vm, err := vmSize()
		if err != nil {
			return err
		}
		debug.SetMemoryLimit(lim.MemoryBytes)
		if err := set("AS", unix.RLIMIT_AS, uint64(vm+lim.MemoryBytes+head)); err != nil {
			return err
		}
	}
	return nil
}
