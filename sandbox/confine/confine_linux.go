package confine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SelfExe is the path a worker should be started from: the running binary,
// reached without search permission on its directories (which a worker in a
// user namespace, mapped to nobody, may lack) and immune to the file being
// replaced on disk.
const SelfExe = "/proc/self/exe"

// nobody is the host id the worker's user namespace maps to when the parent
// is root.
const nobody = 65534

// Probe finds out which layers work here, for this binary. It runs once at
// server start-up: it reads a few /proc and /sys files and, when
// cfg.WorkerArgs is set, starts one worker with every candidate layer and
// waits for it (a few milliseconds), retrying with fewer namespaces if the
// kernel refuses some. It never fails: a layer that does not work is
// reported skipped, with the reason.
func Probe(cfg Config) Report {
	var r Report
	r.set(LayerPgroup, !cfg.disabled(LayerPgroup), "own process group: the whole group is killed at the deadline")
	r.set(LayerPdeathsig, !cfg.disabled(LayerPdeathsig), "SIGKILL when the spawning thread of the server dies")
	r.set(LayerRlimits, !cfg.disabled(LayerRlimits), "RLIMIT_AS = size at RestrictSelf + job memory + 64 MiB, GOMEMLIMIT = job memory, RLIMIT_CPU (SIGKILL), NOFILE 16, FSIZE 0, CORE 0, MEMLOCK 0, MSGQUEUE 0")
	for _, l := range []Layer{LayerPgroup, LayerPdeathsig, LayerRlimits} {
		if cfg.disabled(l) {
			r.set(l, false, "disabled by configuration")
		}
	}

	// Candidates, checked here without a child.
	want := map[Layer]bool{}
	for _, l := range []Layer{LayerUserns, LayerNetns, LayerIPCns} {
		if cfg.disabled(l) {
			r.set(l, false, "disabled by configuration")
		} else {
			want[l] = true
		}
	}
	abi := 0
	switch v, err := landlockABI(); {
	case cfg.disabled(LayerLandlock):
		r.set(LayerLandlock, false, "disabled by configuration")
	case err != nil:
		r.set(LayerLandlock, false, "%v", err)
	default:
		abi = v
		r.abi = v
		want[LayerLandlock] = true
		switch {
		case allThreadsWorks():
			r.landlock = landlockAllThreads
		case earlyAvailable && !preferExec:
			r.landlock = landlockEarly
		default:
			r.landlock = landlockExec
		}
	}
	switch err := seccompAvailable(); {
	case cfg.disabled(LayerSeccomp):
		r.set(LayerSeccomp, false, "disabled by configuration")
	case err != nil:
		r.set(LayerSeccomp, false, "%v", err)
	default:
		want[LayerSeccomp] = true
	}
	if cfg.disabled(LayerCgroup) {
		r.set(LayerCgroup, false, "disabled by configuration")
	} else if dir, err := findCgroup(cfg.CgroupParent); err != nil {
		r.set(LayerCgroup, false, "%v", err)
	} else {
		r.cgroupDir = dir
		r.set(LayerCgroup, true, "memory.max and pids.max per worker, under %s", dir)
	}

	if len(want) == 0 {
		return r.ordered()
	}
	if cfg.WorkerArgs == nil {
		for l := range want {
			r.set(l, false, "not verified: Config.WorkerArgs is nil, so no worker was started to check it")
		}
		r.landlock = ""
		return r.ordered()
	}
	exe := cfg.Executable
	if exe == "" {
		exe = SelfExe
	}
	probeChild(&r, exe, cfg.WorkerArgs, want, abi)
	return r.ordered()
}

// probeChild starts a worker with the wanted layers and records what it
// says about each.
func probeChild(r *Report, exe string, args []string, want map[Layer]bool, abi int) {
	nsTries := [][]Layer{
		{LayerUserns, LayerNetns, LayerIPCns},
		{LayerNetns, LayerIPCns}, // root can do these without a user namespace
		nil,
	}
	var startErrs []string
	for _, try := range nsTries {
		var ns []Layer
		for _, l := range try {
			if want[l] {
				ns = append(ns, l)
			}
		}
		cand := *r
		cand.Layers = append([]Status(nil), r.Layers...)
		cand.nsEarly = earlyAvailable && !preferCloneNS
		for _, l := range []Layer{LayerUserns, LayerNetns, LayerIPCns} {
			cand.set(l, false, "")
		}
		for _, l := range ns {
			cand.set(l, true, "")
		}
		if want[LayerLandlock] {
			cand.set(LayerLandlock, true, "")
		}
		if want[LayerSeccomp] {
			cand.set(LayerSeccomp, true, "")
		}
		out, err := runProbe(cand, exe, args, abi)
		if err != nil {
			startErrs = append(startErrs, fmt.Sprintf("%v: %v", ns, err))
			if errors.Is(err, errProbeRan) {
				break // the worker started; namespaces are not the problem
			}
			continue
		}
		r.nsEarly = cand.nsEarly && cand.nsFlags() != 0
		how := ""
		if r.nsEarly {
			how = "; entered by a C constructor before the Go runtime starts, so the server starts workers with vfork, not a fork of itself"
		}
		for _, l := range []Layer{LayerUserns, LayerNetns, LayerIPCns} {
			switch {
			case !want[l]:
			case cand.Active(l):
				r.set(l, true, "%s%s", nsWhat[l], how)
			default:
				r.set(l, false, "the kernel refused it: %s", strings.Join(startErrs, "; "))
			}
		}
		for _, l := range []Layer{LayerLandlock, LayerSeccomp} {
			if !want[l] {
				continue
			}
			switch res, ok := out[l]; {
			case !ok:
				r.set(l, false, "the probe worker did not report on it")
			case res != "ok":
				r.set(l, false, "%s", res)
			case l == LayerLandlock:
				how := "every thread via AllThreadsSyscall, from worker start-up"
				switch r.landlock {
				case landlockExec:
					how = "every thread via re-exec of the worker from a confined thread (cgo binary); read+execute of the binary and its shared libraries remain"
				case landlockEarly:
					how = "every thread, entered by a C constructor before the Go runtime starts (cgo binary, no re-exec)"
				}
				r.set(l, true, "ABI %d: %s; %s", abi, landlockWhat(abi), how)
			default:
				r.set(l, true, "every thread (TSYNC): EPERM for exec, socket creation, ptrace, mount, namespaces, file open and path changes, SysV IPC, bpf, io_uring, keyctl, modules, prctl, setuid and more; ENOSYS for clone3; clone only for threads; signals only to itself")
			}
		}
		if !r.Active(LayerLandlock) {
			r.landlock = ""
		}
		return
	}
	for l := range want {
		if l != LayerCgroup {
			r.set(l, false, "the probe worker failed: %s", strings.Join(startErrs, "; "))
		}
	}
	r.landlock = ""
}

// nsEnvVar carries the CLONE_NEW* flags (decimal) of the namespaces a cgo
// worker's C constructor enters before the Go runtime starts; Enter
// removes it.
const nsEnvVar = "SANDCALL_NS"

// nsFailedExit is a probe worker's exit code when its constructor could not
// enter the namespaces asked for.
const nsFailedExit = 6

// nsFlags returns the CLONE_NEW* flags of r's active namespaces.
func (r Report) nsFlags() uintptr {
	var f uintptr
	if r.Active(LayerUserns) {
		f |= syscall.CLONE_NEWUSER
	}
	if r.Active(LayerNetns) {
		f |= syscall.CLONE_NEWNET
	}
	if r.Active(LayerIPCns) {
		f |= syscall.CLONE_NEWIPC
	}
	return f
}

// nsEnv returns the nsEnvVar entry when the worker enters r's namespaces
// itself, else "".
func (r Report) nsEnv() string {
	if f := r.nsFlags(); r.nsEarly && f != 0 {
		return fmt.Sprintf("%s=%d", nsEnvVar, f)
	}
	return ""
}

var nsWhat = map[Layer]string{
	LayerUserns: "worker runs as an unprivileged user of its own user namespace (no capabilities on the host)",
	LayerNetns:  "worker has a network namespace of its own: no interface but a down loopback",
	LayerIPCns:  "worker has an IPC namespace of its own: no host SysV IPC or POSIX message queues",
}

var errProbeRan = errors.New("probe worker ran but failed")

// runProbe starts one probe worker and parses its "layer result" lines.
func runProbe(cand Report, exe string, args []string, abi int) (map[Layer]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = []string{EnvVar + "=" + cand.encode(abi, true), "MALLOC_ARENA_MAX=1"}
	if cand.Active(LayerLandlock) && cand.landlock == landlockEarly {
		cmd.Env = append(cmd.Env, earlyEnv(abi))
	}
	if e := cand.nsEnv(); e != "" {
		cmd.Env = append(cmd.Env, e)
	}
	cmd.Dir = "/"
	cmd.SysProcAttr = cand.SysProcAttr()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == nsFailedExit {
			// The namespaces were refused, as a clone would have been:
			// the caller tries fewer.
			return nil, fmt.Errorf("%s", strings.TrimSpace(lastLine(stderr.String())))
		}
		return nil, fmt.Errorf("%w: %v: %s", errProbeRan, err, strings.TrimSpace(lastLine(stderr.String())))
	}
	out := map[Layer]string{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if l, res, ok := strings.Cut(line, " "); ok {
			out[Layer(l)] = res
		}
	}
	return out, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// SysProcAttr returns the attributes for the exec.Cmd of a worker: its own
// process group, SIGKILL on parent death, and the namespaces r has active.
// Start workers from SelfExe, with Env from r.Environ.
//
// Pdeathsig fires when the *thread* that started the worker exits, not the
// process (golang/go#27505): never start workers from a goroutine that
// called runtime.LockOSThread and may exit locked.
func (r Report) SysProcAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{}
	if r.Active(LayerPgroup) {
		a.Setpgid = true
	}
	if r.Active(LayerPdeathsig) {
		a.Pdeathsig = syscall.SIGKILL
	}
	if r.nsEarly {
		return a // the worker enters them itself (nsEnvVar)
	}
	if r.Active(LayerUserns) {
		a.Cloneflags |= syscall.CLONE_NEWUSER
		uid, gid := os.Geteuid(), os.Getegid()
		if uid == 0 {
			uid, gid = nobody, nobody
		}
		// Inside, the worker is nobody too: not 0, so exec leaves it no
		// capabilities even in its own namespace.
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: nobody, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: nobody, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	if r.Active(LayerNetns) {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	if r.Active(LayerIPCns) {
		a.Cloneflags |= syscall.CLONE_NEWIPC
	}
	return a
}

// Environ returns the environment entries a worker needs to apply r; the
// worker's Enter reads and removes them.
func (r Report) Environ() []string {
	// MALLOC_ARENA_MAX=1: in a cgo binary, each glibc malloc arena reserves
	// 64 MiB of address space, which RLIMIT_AS would have to cover.
	env := []string{EnvVar + "=" + r.encode(r.abi, false), "MALLOC_ARENA_MAX=1"}
	if r.Active(LayerLandlock) && r.landlock == landlockEarly {
		env = append(env, earlyEnv(r.abi))
	}
	if e := r.nsEnv(); e != "" {
		env = append(env, e)
	}
	return env
}

// encode writes the layers the worker applies itself, plus the namespaces
// so its Report names the same tier.
func (r Report) encode(abi int, probe bool) string {
	var toks []string
	if probe {
		toks = append(toks, "probe")
	}
	if r.nsEnv() != "" {
		toks = append(toks, "nsearly")
	}
	for _, s := range r.Layers {
		if !s.Active {
			continue
		}
		switch s.Layer {
		case LayerLandlock:
			toks = append(toks, fmt.Sprintf("landlock=%s:%d", r.landlock, abi))
		default:
			toks = append(toks, string(s.Layer))
		}
	}
	return strings.Join(toks, ",")
}

type workerPlan struct {
	probe, landlocked bool
	nsEarly           bool // the constructor must have entered the namespaces
	abi               int
	statusFD          int // inherited across the Landlock re-exec, or -1
}

func decode(v string) (Report, workerPlan, error) {
	var r Report
	p := workerPlan{statusFD: -1}
	if v == "" {
		return r, p, nil
	}
	for _, tok := range strings.Split(v, ",") {
		name, arg, _ := strings.Cut(tok, "=")
		switch Layer(name) {
		case "probe":
			p.probe = true
		case "landlocked":
			p.landlocked = true
		case "nsearly":
			p.nsEarly = true
		case "status":
			fd, err := strconv.Atoi(arg)
			if err != nil || fd < 0 {
				return r, p, fmt.Errorf("%s: bad token %q", EnvVar, tok)
			}
			p.statusFD = fd
		case LayerLandlock:
			mode, n, _ := strings.Cut(arg, ":")
			abi, err := strconv.Atoi(n)
			if err != nil || (mode != landlockAllThreads && mode != landlockExec && mode != landlockEarly) {
				return r, p, fmt.Errorf("%s: bad landlock token %q", EnvVar, tok)
			}
			r.landlock, p.abi = mode, abi
			r.set(LayerLandlock, true, "%s (ABI %d)", mode, abi)
		case LayerPgroup, LayerPdeathsig, LayerRlimits, LayerUserns, LayerNetns, LayerIPCns, LayerSeccomp, LayerCgroup:
			r.set(Layer(name), true, "set by the parent")
		default:
			return r, p, fmt.Errorf("%s: unknown token %q", EnvVar, tok)
		}
	}
	return r.ordered(), p, nil
}

// Enter must be the first thing a worker does, before it opens its pipes
// (they must stay inheritable) or starts anything: it reads and removes
// EnvVar and, when Landlock is active, confines every thread of the process,
// which may mean replacing the process with a fresh, confined image of the
// same binary (then Enter runs again there and returns). When started by
// Probe, Enter checks the layers, reports to stdout and exits. It returns
// the Report the parent chose, to pass to RestrictSelf; the zero Report if
// EnvVar is unset. If Enter returns an error the worker must exit without
// running a job.
func Enter() (Report, error) {
	v, ok := os.LookupEnv(EnvVar)
	if !ok {
		return Report{}, nil
	}
	r, p, err := decode(v)
	if err != nil {
		return Report{}, err
	}
	early, earlyErr, earlyFD := earlyResult()
	os.Unsetenv(earlyEnvVar)
	nsIn, nsErr := earlyNS()
	os.Unsetenv(nsEnvVar)
	if p.nsEarly && !p.landlocked {
		// Fail closed: a worker whose parent left the namespaces to it
		// runs only inside them.
		var err error
		switch {
		case nsErr != nil:
			err = fmt.Errorf("namespaces before the Go runtime: %w", nsErr)
		case !nsIn:
			err = fmt.Errorf("namespaces before the Go runtime: not entered (no C constructor in this binary, or %s unset)", nsEnvVar)
		}
		if err != nil {
			if p.probe {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(nsFailedExit)
			}
			return Report{}, err
		}
	}
	if p.statusFD >= 0 {
		statusFD = p.statusFD
		unix.CloseOnExec(statusFD)
	} else if earlyFD >= 0 {
		statusFD = earlyFD
	} else if fd, err := unix.Open("/proc/self/status", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		statusFD = fd
	}
	if p.probe {
		probeWorker(r, v, p, early, earlyErr)
		os.Exit(0)
	}
	if err := enterLandlock(r, v, p, early, earlyErr); err != nil {
		return Report{}, err
	}
	os.Unsetenv(EnvVar)
	return r, nil
}

func enterLandlock(r Report, v string, p workerPlan, early bool, earlyErr error) error {
	if !r.Active(LayerLandlock) || p.landlocked {
		return nil
	}
	switch r.landlock {
	case landlockAllThreads:
		return landlockAll(p.abi)
	case landlockEarly:
		// Fail closed: a worker asked for the constructor's domain runs
		// only if the constructor entered it.
		switch {
		case earlyErr != nil:
			return fmt.Errorf("landlock before the Go runtime: %w", earlyErr)
		case !early:
			return fmt.Errorf("landlock before the Go runtime: not entered (no C constructor in this binary, or %s unset)", earlyEnvVar)
		}
		return nil
	}
	// The status descriptor survives the exec, for RestrictSelf's VmSize.
	tok := ",landlocked"
	if statusFD >= 0 {
		if _, err := unix.FcntlInt(uintptr(statusFD), unix.F_SETFD, 0); err == nil {
			tok += fmt.Sprintf(",status=%d", statusFD)
		}
	}
	env := []string{EnvVar + "=" + v + tok}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, EnvVar+"=") {
			env = append(env, e)
		}
	}
	return landlockExecSelf(p.abi, env)
}

// probeWorker applies the candidate layers and reports on each, one
// "layer result" line to stdout.
func probeWorker(r Report, v string, p workerPlan, early bool, earlyErr error) {
	if r.Active(LayerLandlock) {
		if err := enterLandlock(r, v, p, early, earlyErr); err != nil {
			fmt.Printf("landlock %v\n", err)
		} else if _, err := os.Open("/"); !errors.Is(err, unix.EACCES) {
			fmt.Printf("landlock not enforced: opening / gave %v\n", err)
		} else {
			fmt.Println("landlock ok")
		}
	}
	if r.Active(LayerSeccomp) {
		if err := installSeccomp(); err != nil {
			fmt.Printf("seccomp %v\n", err)
		} else if _, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0); err != unix.EPERM {
			fmt.Printf("seccomp not enforced: socket gave %v\n", err)
		} else if err := spawnThreads(4); err != nil {
			fmt.Printf("seccomp breaks the runtime: %v\n", err)
		} else {
			fmt.Println("seccomp ok")
		}
	}
}

// spawnThreads makes the runtime create threads (clone with CLONE_THREAD)
// by holding n goroutines locked to threads at once.
func spawnThreads(n int) error {
	var wg sync.WaitGroup
	hold := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			wg.Done()
			<-hold
		}()
	}
	wg.Wait()
	close(hold)
	return nil
}

// RestrictSelf applies the in-process layers of r to the calling worker:
// rlimits from lim (and the Go memory limit), then the seccomp filter on
// every thread. Call it after the worker opened its pipes and warmed its
// engine, before it reads untrusted input; afterwards the process can open
// no file, create no socket, exec nothing and gain no privilege. Landlock
// and the namespaces were applied before (Enter, SysProcAttr). Errors are
// fatal for the job: the worker must exit rather than run it.
func RestrictSelf(r Report, lim Limits) error {
	if r.Active(LayerRlimits) {
		if err := setRlimits(lim); err != nil {
			return err
		}
	}
	if r.Active(LayerSeccomp) {
		if err := installSeccomp(); err != nil {
			return err
		}
	}
	return nil
}

// findCgroup returns a delegated cgroup v2 directory with the memory and
// pids controllers enabled for children: parent if set, else the one this
// process is in.
func findCgroup(parent string) (string, error) {
	mnt, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	dir := parent
	if dir == "" {
		b, err := os.ReadFile("/proc/self/cgroup")
		if err != nil {
			return "", err
		}
		rel, ok := "", false
		for _, line := range strings.Split(string(b), "\n") {
			if p, found := strings.CutPrefix(line, "0::"); found {
				rel, ok = p, true
			}
		}
		if !ok {
			return "", errors.New("this process is in no cgroup v2 (cgroup v1 only)")
		}
		dir = mnt + rel
	}
	ctrl, err := os.ReadFile(dir + "/cgroup.controllers")
	if err != nil {
		return "", fmt.Errorf("%s is not a cgroup v2 directory: %v", dir, err)
	}
	sub, err := os.ReadFile(dir + "/cgroup.subtree_control")
	if err != nil {
		return "", err
	}
	for _, c := range []string{"memory", "pids"} {
		if !hasWord(ctrl, c) {
			return "", fmt.Errorf("cgroup v2 at %s lacks the %s controller (has: %q; on this machine it may belong to a cgroup v1 hierarchy)", dir, c, strings.TrimSpace(string(ctrl)))
		}
		if !hasWord(sub, c) {
			return "", fmt.Errorf("%s/cgroup.subtree_control does not enable %s: not delegated", dir, c)
		}
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return "", fmt.Errorf("%s is not writable: %v", dir, err)
	}
	return dir, nil
}

func hasWord(b []byte, w string) bool {
	for _, f := range strings.Fields(string(b)) {
		if f == w {
			return true
		}
	}
	return false
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source super
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if fs := strings.Fields(pre); len(fs) >= 5 {
			return fs[4], nil
		}
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted")
}
