//go:build linux && cgo

package confine

/*
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
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

// sandcall_early_landlock runs before the Go runtime starts, while the
// process has one thread: a Landlock domain entered here is inherited by
// every thread the runtime ever creates. The parent passes the ruleset's
// handled rights in SANDCALL_LANDLOCK as "size:fs:net:scoped" (decimal),
// computed by the same Go code as every other mode's ruleset.
__attribute__((constructor)) static void sandcall_early_landlock(void) {
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

static int sandcall_early_result(void) { return sandcall_early; }
static int sandcall_early_fd(void) { return sandcall_early_status_fd; }
*/
import "C"

import "syscall"

// earlyAvailable says whether this binary confines workers with Landlock
// from a C constructor, before the Go runtime starts (see landlockEarly).
const earlyAvailable = true

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
