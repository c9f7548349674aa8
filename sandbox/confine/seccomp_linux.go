package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The filter is a hand-written classic BPF program over struct seccomp_data:
//
//	nr   int32  @0
//	arch uint32 @4
//	ip   uint64 @8
//	args [6]uint64 @16 (little-endian on amd64 and arm64: low word first)
//
// A foreign architecture (i386 via int 0x80 on amd64) or an x32 syscall
// number kills the process. Listed syscalls fail with EPERM; clone3 fails
// with ENOSYS so that glibc's pthread_create falls back to clone (the Go
// runtime itself always uses clone); clone is allowed only for threads
// (CLONE_THREAD set, no namespace flag); kill-type syscalls only to this
// process; ioctl never with TIOCSTI or TIOCLINUX. Everything else is
// allowed, so the kernel's constant-action cache keeps the common syscalls
// (read, write, futex, mmap, ...) off the filter's slow path.

const (
	offNr    = 0
	offArch  = 4
	offArg0  = 16 // low 32 bits of args[0]
	offArg1  = 24 // low 32 bits of args[1]
	retAllow = unix.SECCOMP_RET_ALLOW
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retNOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)

	nsFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS |
		unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET
)

// commonDenied are denied on every supported architecture. They are grouped
// by what they would give a guest that escaped the JavaScript engine.
var commonDenied = []uintptr{
	// New programs.
	unix.SYS_EXECVE, unix.SYS_EXECVEAT,
	// Network (and any other socket: no new socket of any family).
	unix.SYS_SOCKET, unix.SYS_SOCKETPAIR, unix.SYS_CONNECT, unix.SYS_BIND,
	unix.SYS_LISTEN, unix.SYS_ACCEPT, unix.SYS_ACCEPT4,
	// Other processes' memory and descriptors.
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_PIDFD_OPEN, unix.SYS_PIDFD_GETFD, unix.SYS_PIDFD_SEND_SIGNAL,
	unix.SYS_TKILL, unix.SYS_KCMP,
	// Mounts and namespaces.
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_MOUNT_SETATTR, unix.SYS_MOVE_MOUNT,
	unix.SYS_OPEN_TREE, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT,
	unix.SYS_FSPICK, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT, unix.SYS_UNSHARE,
	unix.SYS_SETNS,
	// The filesystem: no new open, no path-based change. (Landlock denies the
	// same where it is active; this holds where it is not.)
	unix.SYS_OPENAT, unix.SYS_OPENAT2, unix.SYS_NAME_TO_HANDLE_AT,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_MKNODAT, unix.SYS_MKDIRAT,
	unix.SYS_UNLINKAT, unix.SYS_RENAMEAT2, unix.SYS_LINKAT, unix.SYS_SYMLINKAT,
	unix.SYS_TRUNCATE, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2, unix.SYS_FCHOWNAT,
	unix.SYS_UTIMENSAT, unix.SYS_SETXATTR, unix.SYS_LSETXATTR,
	unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_INOTIFY_ADD_WATCH,
	unix.SYS_FANOTIFY_INIT, unix.SYS_FANOTIFY_MARK, unix.SYS_MEMFD_CREATE,
	unix.SYS_MQ_OPEN, unix.SYS_MQ_UNLINK, unix.SYS_ACCT, unix.SYS_SWAPON,
	unix.SYS_SWAPOFF, unix.SYS_QUOTACTL,
	// System V IPC (shared with the host without an IPC namespace).
	unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMCTL, unix.SYS_SHMDT,
	unix.SYS_SEMGET, unix.SYS_SEMOP, unix.SYS_SEMCTL, unix.SYS_SEMTIMEDOP,
	unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
	// The kernel's attack surface and its global state.
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE,
	unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_REBOOT,
	unix.SYS_SETHOSTNAME, unix.SYS_SETDOMAINNAME, unix.SYS_SETTIMEOFDAY,
	unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX,
	unix.SYS_SYSLOG, unix.SYS_VHANGUP, unix.SYS_PERSONALITY, unix.SYS_PRCTL,
	// Identity.
	unix.SYS_SETUID, unix.SYS_SETGID, unix.SYS_SETREUID, unix.SYS_SETREGID,
	unix.SYS_SETRESUID, unix.SYS_SETRESGID, unix.SYS_SETGROUPS,
	unix.SYS_SETFSUID, unix.SYS_SETFSGID, unix.SYS_CAPSET,
}

// signalSyscalls may target only this process (argument 0 is its pid).
var signalSyscalls = []uintptr{
	unix.SYS_KILL, unix.SYS_TGKILL, unix.SYS_RT_SIGQUEUEINFO, unix.SYS_RT_TGSIGQUEUEINFO,
}

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

const (
	ldW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	ret  = unix.BPF_RET | unix.BPF_K
)

// seccompProgram builds the filter for this architecture; pid is this
// process's id, the only target allowed for signals.
func seccompProgram(pid int) ([]unix.SockFilter, error) {
	if seccompArch == 0 {
		return nil, fmt.Errorf("no seccomp filter for GOARCH=%s", runtime.GOARCH)
	}
	p := []unix.SockFilter{
		stmt(ldW, offArch),
		jump(jeq, seccompArch, 1, 0),
		stmt(ret, retKill),
		stmt(ldW, offNr),
	}
	if x32Bit != 0 {
		p = append(p, jump(jge, x32Bit, 0, 1), stmt(ret, retKill))
	}
	for _, nr := range append(append([]uintptr{}, commonDenied...), archDenied...) {
		p = append(p, jump(jeq, uint32(nr), 0, 1), stmt(ret, retEPERM))
	}
	p = append(p, jump(jeq, unix.SYS_CLONE3, 0, 1), stmt(ret, retNOSYS))
	p = append(p,
		jump(jeq, unix.SYS_CLONE, 0, 6),
		stmt(ldW, offArg0),
		jump(jset, unix.CLONE_THREAD, 1, 0),
		stmt(ret, retEPERM),
		jump(jset, nsFlags, 0, 1),
		stmt(ret, retEPERM),
		stmt(ret, retAllow),
	)
	for _, nr := range signalSyscalls {
		p = append(p,
			jump(jeq, uint32(nr), 0, 4),
			stmt(ldW, offArg0),
			jump(jeq, uint32(pid), 0, 1),
			stmt(ret, retAllow),
			stmt(ret, retEPERM),
		)
	}
	p = append(p,
		jump(jeq, unix.SYS_IOCTL, 0, 5),
		stmt(ldW, offArg1),
		jump(jeq, unix.TIOCSTI, 2, 0),
		jump(jeq, unix.TIOCLINUX, 1, 0),
		stmt(ret, retAllow),
		stmt(ret, retEPERM),
	)
	p = append(p, stmt(ret, retAllow))
	if len(p) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp filter too long: %d instructions", len(p))
	}
	return p, nil
}

// seccompAvailable reports why a filter cannot be installed here, or nil.
func seccompAvailable() error {
	if seccompArch == 0 {
		return fmt.Errorf("no filter written for GOARCH=%s", runtime.GOARCH)
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("kernel built without seccomp (PR_GET_SECCOMP: %v)", err)
	}
	action := uint32(retKill)
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	if errno != 0 {
		return fmt.Errorf("seccomp filters unsupported (SECCOMP_GET_ACTION_AVAIL: %v)", errno)
	}
	return nil
}

// installSeccomp installs the filter on every thread (SECCOMP_FILTER_FLAG_TSYNC
// works with cgo, unlike AllThreadsSyscall). no_new_privs is set first on
// the calling thread; TSYNC carries it to the others.
func installSeccomp() error {
	prog, err := seccompProgram(unix.Getpid())
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	if r != 0 {
		return fmt.Errorf("seccomp: thread %d could not be synchronized", r)
	}
	return nil
}
