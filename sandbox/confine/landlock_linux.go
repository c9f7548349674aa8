package confine

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// How Landlock reaches every thread of a worker. landlock_restrict_self
// confines the calling thread only, and a Go program is multi-threaded before
// main runs, so:
//
//   - landlockAllThreads: syscall.AllThreadsSyscall runs no_new_privs and
//     landlock_restrict_self on every thread. It returns ENOTSUP when cgo is
//     linked in (threads made by C are unknown to the Go runtime).
//   - landlockExec: restrict one locked thread, then execve the binary again
//     from it. The new image starts with that thread's credentials, so every
//     thread it ever has is confined. Costs one more exec of the binary, and
//     the ruleset must let the exec happen: read+execute on the binary and on
//     the files it maps (the ELF interpreter and shared libraries of a cgo
//     binary), nothing else. Used only if landlockEarly is unavailable.
//   - landlockEarly: in a cgo binary, a C constructor (early_cgo_linux.go)
//     restricts the process before the Go runtime starts, while it has one
//     thread. Every thread inherits the domain, no second exec is needed,
//     and the ruleset grants nothing (not even read of the binary).
//
// LANDLOCK_RESTRICT_SELF_TSYNC (Landlock ABI 8) would make both unnecessary;
// it is not used yet because no kernel we test on has it.
const (
	landlockAllThreads = "allthreads"
	landlockExec       = "exec"
	landlockEarly      = "early"
)

// earlyEnvVar carries the handled rights of the ruleset to the C
// constructor of a cgo worker ("size:fs:net:scoped", decimal). Its presence
// asks for landlockEarly; Enter removes it.
const earlyEnvVar = "SANDCALL_LANDLOCK"

// earlyEnv returns the earlyEnvVar entry for a ruleset denying everything
// abi knows: the same rights landlockAll and landlockExecSelf handle.
func earlyEnv(abi int) string {
	a, size := handled(abi)
	return fmt.Sprintf("%s=%d:%d:%d:%d", earlyEnvVar, size, a.handledFS, a.handledNet, a.scoped)
}

// preferCloneNS makes Probe have the clone create the namespaces even in a
// cgo binary, for the tests of that mode.
var preferCloneNS bool

// preferExec makes Probe choose landlockExec over landlockEarly, for the
// tests that keep the re-exec path working.
var preferExec bool

// landlockABI returns the kernel's Landlock ABI version, or an error saying
// why Landlock is unusable.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch errno {
	case 0:
		return int(v), nil
	case unix.ENOSYS:
		return 0, fmt.Errorf("kernel built without Landlock (ENOSYS)")
	case unix.EOPNOTSUPP:
		return 0, fmt.Errorf("Landlock is not enabled at boot (add landlock to lsm=)")
	default:
		return 0, fmt.Errorf("landlock_create_ruleset: %v", errno)
	}
}

// rulesetAttr is struct landlock_ruleset_attr up to ABI 6; its size tells the
// kernel which fields we know.
type rulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// handled returns the ruleset attribute handling every right abi knows, and
// its size: with no rule granting them, every one is denied.
func handled(abi int) (rulesetAttr, uintptr) {
	a := rulesetAttr{handledFS: unix.LANDLOCK_ACCESS_FS_EXECUTE |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM}
	size := unsafe.Sizeof(uint64(0))
	if abi >= 2 {
		a.handledFS |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		a.handledFS |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 4 {
		a.handledNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		size = 2 * unsafe.Sizeof(uint64(0))
	}
	if abi >= 5 {
		a.handledFS |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= 6 {
		a.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
		size = unsafe.Sizeof(a)
	}
	return a, size
}

// landlockWhat says what a ruleset for abi denies, for the report.
func landlockWhat(abi int) string {
	s := "no filesystem access"
	if abi >= 4 {
		s += ", no TCP bind/connect"
	}
	if abi >= 6 {
		s += ", no signals or abstract unix sockets outside the worker"
	}
	return s
}

// createRuleset builds a ruleset denying everything abi knows, granting
// only read+execute on the regular files in allow.
func createRuleset(abi int, allow []string) (int, error) {
	attr, size := handled(abi)
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	for _, p := range allow {
		if err := addReadExec(int(fd), p); err != nil {
			unix.Close(int(fd))
			return -1, err
		}
	}
	return int(fd), nil
}

func addReadExec(ruleset int, path string) error {
	f, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("landlock rule for %s: %w", path, err)
	}
	defer unix.Close(f)
	rule := unix.LandlockPathBeneathAttr{
		Allowed_access: unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE,
		Parent_fd:      int32(f),
	}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset),
		unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", path, errno)
	}
	return nil
}

// allThreadsWorks reports whether syscall.AllThreadsSyscall is usable in
// this binary (it is not when cgo is linked in).
func allThreadsWorks() bool {
	_, _, errno := syscall.AllThreadsSyscall(unix.SYS_GETPID, 0, 0, 0)
	return errno == 0
}

// landlockAll confines every thread of this process with a ruleset that
// grants nothing.
func landlockAll(abi int) error {
	fd, err := createRuleset(abi, nil)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if _, _, errno := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); errno != 0 {
		return fmt.Errorf("no_new_privs on all threads: %w", errno)
	}
	if _, _, errno := syscall.AllThreadsSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self on all threads: %w", errno)
	}
	return nil
}

// landlockExecSelf confines the calling thread and replaces the process
// with a fresh image of this binary, which inherits the confinement on every
// thread. It returns only on failure.
func landlockExecSelf(abi int, env []string) error {
	allow, err := mappedExecutables()
	if err != nil {
		return err
	}
	fd, err := createRuleset(abi, allow)
	if err != nil {
		return err
	}
	// This thread becomes unusable for anything else, so it is never
	// unlocked: if exec fails, the runtime discards it with the goroutine.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		unix.Close(fd)
		return fmt.Errorf("no_new_privs: %w", err)
	}
	_, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0)
	unix.Close(fd)
	if errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	// /proc/self/exe rather than a path: it needs no search permission on
	// the binary's directories.
	err = unix.Exec("/proc/self/exe", os.Args, env)
	return fmt.Errorf("re-exec under Landlock: %w", err)
}

// mappedExecutables lists the files this process maps executable: the binary
// itself and, for a dynamically linked binary, its ELF interpreter and shared
// libraries. A fresh exec of the same binary needs exactly those.
func mappedExecutables() ([]string, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[string]bool{}
	var paths []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// address perms offset dev inode pathname
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.Contains(fields[1], "x") || !strings.HasPrefix(fields[5], "/") {
			continue
		}
		p := strings.Join(fields[5:], " ")
		if strings.HasSuffix(p, " (deleted)") {
			return nil, fmt.Errorf("%s was deleted since start-up", strings.TrimSuffix(p, " (deleted)"))
		}
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no executable mappings in /proc/self/maps")
	}
	return paths, nil
}
