//go:build linux && cgo

package confine

/*
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

// 1: Landlock applied; -errno: it failed; 0: not asked for.
static int sandcall_early = 0;
static int sandcall_early_status_fd = -1;

// 1: the namespaces were entered; -errno: it failed; 0: not asked for.
static int sandcall_ns = 0;

static int sandcall_write_file(const char *path, const char *s) {
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	size_t n = strlen(s);
	ssize_t w = write(fd, s, n);
	int e = errno;
	close(fd);
	if (w < 0) {
		return -e;
	}
	return (size_t)w == n ? 0 : -EIO;
}

// sandcall_early_ns enters the worker's namespaces before the Go runtime
// starts, while the process has one thread (unshare of a user namespace
// refuses a multithreaded process). The parent then starts workers without
// CLONE_NEWUSER, so Go spawns them with vfork instead of a fork that copies
// the whole server's page tables. SANDCALL_NS holds the CLONE_NEW* flags
// (decimal). With a user namespace the worker maps nobody (65534) inside
// to its own user and group outside, as the clone-time mapping did, and
// drops the full capability set that unshare gives it there: it ends as it
// would after an exec as nobody, with no capability in any namespace.
static void sandcall_early_ns(void) {
	const char *v = getenv("SANDCALL_NS");
	if (v == NULL) {
		return;
	}
	char *end;
	unsigned long flags = strtoul(v, &end, 10);
	if (*v == '\0' || *end != '\0' || flags == 0 ||
	    (flags & ~(unsigned long)(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC)) != 0) {
		sandcall_ns = -EINVAL;
		return;
	}
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare((int)flags) != 0) {
		sandcall_ns = -errno;
		return;
	}
	if (flags & CLONE_NEWUSER) {
		char buf[64];
		int r = sandcall_write_file("/proc/self/setgroups", "deny");
		if (r == 0) {
			snprintf(buf, sizeof buf, "65534 %u 1", (unsigned)uid);
			r = sandcall_write_file("/proc/self/uid_map", buf);
		}
		if (r == 0) {
			snprintf(buf, sizeof buf, "65534 %u 1", (unsigned)gid);
			r = sandcall_write_file("/proc/self/gid_map", buf);
		}
		if (r != 0) {
			sandcall_ns = r;
			return;
		}
		struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
		struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
		memset(data, 0, sizeof data);
		if (syscall(SYS_capset, &hdr, data) != 0) {
			sandcall_ns = -errno;
			return;
		}
	}
	sandcall_ns = 1;
}

// sandcall_early_landlock runs before the Go runtime starts, while the
// process has one thread: a Landlock domain entered here is inherited by
// every thread the runtime ever creates. The parent passes the ruleset's
// handled rights in SANDCALL_LANDLOCK as "size:fs:net:scoped" (decimal),
// computed by the same Go code as every other mode's ruleset.
static void sandcall_early_landlock(void) {
	const char *v = getenv("SANDCALL_LANDLOCK");
	if (v == NULL) {
		return;
	}
	unsigned long long attr[3] = {0, 0, 0};
	char *end;
	unsigned long size = strtoul(v, &end, 10);
	for (int i = 0; i < 3; i++) {
		if (*end != ':') {
			sandcall_early = -EINVAL;
			return;
		}
		attr[i] = strtoull(end + 1, &end, 10);
	}
	if (*end != '\0' || size == 0 || size > sizeof attr || size % 8 != 0) {
		sandcall_early = -EINVAL;
		return;
	}
	// RestrictSelf reads the worker's VmSize from here; under Landlock
	// /proc/self/status can no longer be opened.
	sandcall_early_status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	long fd = syscall(SYS_landlock_create_ruleset, attr, size, 0);
	if (fd < 0) {
		sandcall_early = -errno;
		return;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_landlock_restrict_self, fd, 0) != 0) {
		sandcall_early = -errno;
		close(fd);
		return;
	}
	close(fd);
	sandcall_early = 1;
}

// sandcall_early_start runs both, namespaces first: a worker that fails to
// enter its namespaces does not confine itself further (Enter refuses to
// run it).
__attribute__((constructor)) static void sandcall_early_start(void) {
	sandcall_early_ns();
	if (sandcall_ns < 0) {
		return;
	}
	sandcall_early_landlock();
}

static int sandcall_early_result(void) { return sandcall_early; }
static int sandcall_ns_result(void) { return sandcall_ns; }
static int sandcall_early_fd(void) { return sandcall_early_status_fd; }
*/
import "C"

import "syscall"

// earlyAvailable says whether this binary confines workers with Landlock
// and enters their namespaces from a C constructor, before the Go runtime
// starts (see landlockEarly and nsEnvVar).
const earlyAvailable = true

// earlyNS reports what the constructor did about namespaces: entered,
// the error it met, or false, nil when it was not asked to.
func earlyNS() (entered bool, err error) {
	switch r := int(C.sandcall_ns_result()); {
	case r == 1:
		return true, nil
	case r < 0:
		return false, syscall.Errno(-r)
	}
	return false, nil
}

// earlyResult reports what the constructor did: applied, the error it met,
// or false, nil when it was not asked to run; and the /proc/self/status
// descriptor it opened before confining (-1 if none).
func earlyResult() (applied bool, err error, statusFD int) {
	r := int(C.sandcall_early_result())
	fd := int(C.sandcall_early_fd())
	switch {
	case r == 1:
		return true, nil, fd
	case r < 0:
		return false, syscall.Errno(-r), fd
	}
	return false, nil, fd
}
