package confine

import "golang.org/x/sys/unix"

const (
	seccompArch = unix.AUDIT_ARCH_AARCH64
	x32Bit      = 0 // no second ABI on arm64
)

// archDenied are the arm64-only entries (arm64 lacks the legacy syscalls).
var archDenied = []uintptr{
	unix.SYS_RENAMEAT, unix.SYS_NFSSERVCTL, unix.SYS_LOOKUP_DCOOKIE,
	unix.SYS_MEMFD_SECRET, unix.SYS_INOTIFY_INIT1,
}
