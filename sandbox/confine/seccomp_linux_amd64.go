package confine

import "golang.org/x/sys/unix"

const (
	seccompArch = unix.AUDIT_ARCH_X86_64
	// x32Bit marks x32-ABI syscall numbers, which reach the same kernel
	// entry points under other numbers: any of them kills the process.
	x32Bit = 0x40000000
)

// archDenied are the amd64-only variants of commonDenied's syscalls and the
// legacy ones arm64 never had.
var archDenied = []uintptr{
	unix.SYS_FORK, unix.SYS_VFORK, unix.SYS_OPEN, unix.SYS_CREAT,
	unix.SYS_MKNOD, unix.SYS_MKDIR, unix.SYS_RMDIR, unix.SYS_UNLINK,
	unix.SYS_RENAME, unix.SYS_RENAMEAT, unix.SYS_LINK, unix.SYS_SYMLINK,
	unix.SYS_CHMOD, unix.SYS_CHOWN, unix.SYS_LCHOWN, unix.SYS_UTIME,
	unix.SYS_UTIMES, unix.SYS_FUTIMESAT, unix.SYS_USELIB, unix.SYS_USTAT,
	unix.SYS_SYSFS, unix.SYS__SYSCTL, unix.SYS_IOPL, unix.SYS_IOPERM,
	unix.SYS_MODIFY_LDT, unix.SYS_CREATE_MODULE, unix.SYS_GET_KERNEL_SYMS,
	unix.SYS_QUERY_MODULE, unix.SYS_NFSSERVCTL, unix.SYS_LOOKUP_DCOOKIE,
	unix.SYS_MEMFD_SECRET, unix.SYS_INOTIFY_INIT, unix.SYS_INOTIFY_INIT1,
}
