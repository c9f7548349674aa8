// Package confine is the operating-system confinement of sandcall's worker
// processes: each layer is probed once at server start-up, used where the
// kernel allows, and skipped with the reason where it does not. The Report
// says exactly which layers are active; it never claims more.
//
// The parent probes and starts workers:
//
//	rep := confine.Probe(confine.Config{WorkerArgs: []string{"worker"}})
//	slog.Info("isolation", "tier", rep.Tier()) // `sandcall doctor` prints rep.String()
//	cmd := exec.Command(confine.SelfExe, "worker")
//	cmd.Env = append(rep.Environ(), ...)
//	cmd.Dir = "/"
//	cmd.SysProcAttr = rep.SysProcAttr()
//
// and the worker confines itself:
//
//	rep, err := confine.Enter() // first thing in the worker subcommand
//	... open pipes 3 and 4, warm the engine, read the job ...
//	err = confine.RestrictSelf(rep, confine.Limits{MemoryBytes: m, CPUSeconds: s})
//	... run the untrusted program ...
//
// Everything here is implemented for Linux; elsewhere Probe reports every
// layer unavailable and the worker has only the process boundary.
//
// # Security
//
// What each layer buys, against a guest that escaped the JavaScript or
// WebAssembly engine and runs arbitrary code in the worker:
//
//   - pgroup: the worker leads its own process group, so the parent can
//     kill it and anything it forked (nothing, under seccomp) at once.
//   - pdeathsig: the worker gets SIGKILL when the server thread that
//     started it dies, so a crashed server leaves no worker behind.
//   - rlimits: RLIMIT_AS = the worker's size at RestrictSelf + the job's
//     memory + DefaultHeadroom, and the Go memory limit = the job's memory:
//     an allocation past the limit ends the worker with "fatal error: out
//     of memory" on stderr, peak RSS within 1.2x the limit (measured), not
//     the machine's memory. RLIMIT_CPU (SIGKILL), NOFILE 16, FSIZE 0 (no
//     regular file can grow), CORE 0, MEMLOCK 0, MSGQUEUE 0.
//   - userns: the worker is nobody (uid and gid 65534) in a user namespace
//     of its own, with no capability on the host, even when the server runs
//     as root.
//   - netns: no network at all; only a loopback interface that is down.
//   - ipcns: no access to the host's System V IPC objects or POSIX message
//     queues. In a cgo binary the worker enters the three namespaces itself, from a
//     C constructor that runs before the Go runtime starts (unshare, its own
//     uid and gid maps, then every capability dropped), so the server starts
//     it without CLONE_NEWUSER and Go spawns it with vfork. With the clone
//     creating a user namespace, Go must fork: the server's page tables are
//     copied at every worker start and the server then faults on each page
//     it writes (BenchmarkWorkerStartLargeServer: a parent with 256 MiB of
//     live heap spent 3.0-3.5 ms of CPU per start with the constructor,
//     101-114 ms with the fork). Without cgo the clone creates them, as
//     before; a worker told to expect the constructor's namespaces refuses
//     to run outside them.
//   - landlock: from the worker's first instruction, every thread: no
//     filesystem access (no read, write, create, remove, rename, truncate,
//     device ioctl, directory listing), and with Landlock ABI >= 4 no TCP
//     bind or connect, with ABI >= 6 no signal or abstract unix socket to
//     processes outside the worker. Without cgo, AllThreadsSyscall confines
//     every thread in place; in a cgo binary a C constructor enters the
//     domain before the Go runtime starts, while the process has one thread.
//     Only if that is unavailable is the worker re-executed from a confined
//     thread, and then read and execute of the binary and its shared
//     libraries remain allowed (Report says which way it went).
//   - seccomp: a filter on every thread returns EPERM for execve, socket
//     creation (any family), connect/bind/listen/accept, ptrace,
//     process_vm_*, pidfd_*, mount and namespace calls, every open and
//     path-changing call, SysV IPC, memfd, bpf, perf, userfaultfd, io_uring,
//     keyctl, kexec and modules, prctl, personality, setuid-style calls; it
//     allows clone only for threads, signals only to the worker itself, no
//     TIOCSTI; clone3 gets ENOSYS (glibc then uses clone); a foreign
//     architecture or an x32 syscall kills the process. Inherited
//     descriptors (the pipes) keep working: read, write, sendmsg, recvmsg
//     are allowed.
//   - cgroup: with a delegated cgroup v2 directory, each worker gets
//     memory.max and pids.max of its own, entered atomically at clone; the
//     kernel's OOM count tells E_MEMORY apart.
//
// None of this hides what the worker may already hold: its pipes, its
// environment (empty but for EnvVar, removed by Enter, and
// MALLOC_ARENA_MAX) and its own memory.
//
// # Limits
//
// Landlock and seccomp are applied by the worker to itself: a worker that
// skips Enter or RestrictSelf is not confined by them, which is why Probe
// checks them end to end in a real worker of the same binary. Layers that
// the kernel refuses are skipped, never faked: on a machine without user
// namespaces or Landlock the Tier is shorter. The cgroup layer needs a
// delegated cgroup v2 hierarchy with the memory and pids controllers; cgroup
// v1 is not supported.
package confine
