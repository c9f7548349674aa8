package confine

import (
	"fmt"
	"strings"
)

// Layer names one confinement layer.
type Layer string

// The layers, in the order Probe reports them.
const (
	LayerPgroup    Layer = "pgroup"    // the worker leads its own process group
	LayerPdeathsig Layer = "pdeathsig" // SIGKILL when the spawning thread dies
	LayerRlimits   Layer = "rlimits"   // AS, CPU, NOFILE, FSIZE, CORE, MEMLOCK, MSGQUEUE
	LayerUserns    Layer = "userns"    // a new user namespace, root mapped to nobody
	LayerNetns     Layer = "netns"     // a new network namespace: no interfaces but a down lo
	LayerIPCns     Layer = "ipcns"     // a new IPC namespace: no SysV IPC or POSIX queues of the host
	LayerLandlock  Layer = "landlock"  // no filesystem access; no TCP; no signals or abstract sockets outside
	LayerSeccomp   Layer = "seccomp"   // a syscall deny list (exec, sockets, ptrace, mount, open, ...)
	LayerCgroup    Layer = "cgroup"    // a cgroup v2 child with memory.max and pids.max
)

// Layers lists every layer, in report order.
var Layers = []Layer{
	LayerPgroup, LayerPdeathsig, LayerRlimits,
	LayerUserns, LayerNetns, LayerIPCns,
	LayerLandlock, LayerSeccomp, LayerCgroup,
}

// Status is what Probe found out about one layer.
type Status struct {
	Layer  Layer
	Active bool
	// Reason says what the layer enforces when Active, and why it is
	// skipped otherwise.
	Reason string
}

// Report is the set of layers that work on this machine, for this binary.
// The zero Report has no active layer: a worker started with it runs with
// no confinement beyond the process boundary.
type Report struct {
	Layers []Status

	// landlock is how Landlock reaches every thread of the worker:
	// landlockAllThreads, landlockEarly or landlockExec; "" when inactive.
	landlock string
	// abi is the kernel's Landlock ABI version, when LayerLandlock is active.
	abi int
	// cgroupDir is the delegated cgroup v2 directory, when LayerCgroup is
	// active.
	cgroupDir string
	// nsEarly: the worker enters its namespaces itself, from the C
	// constructor of a cgo binary, so the server starts it without
	// CLONE_NEWUSER (vfork, no fork of the server). Otherwise the clone
	// creates them.
	nsEarly bool
}

// Active reports whether layer l is active in r.
func (r Report) Active(l Layer) bool {
	for _, s := range r.Layers {
		if s.Layer == l {
			return s.Active
		}
	}
	return false
}

// Tier names the active set compactly, for results and audit records:
// "process" followed by each active confinement layer, e.g.
// "process+rlimits+userns+netns+ipcns+landlock+seccomp". The process-group
// and parent-death layers are lifecycle, not confinement, and are left out.
func (r Report) Tier() string {
	var b strings.Builder
	b.WriteString("process")
	for _, s := range r.Layers {
		if s.Active && s.Layer != LayerPgroup && s.Layer != LayerPdeathsig {
			b.WriteString("+")
			b.WriteString(string(s.Layer))
		}
	}
	return b.String()
}

// String renders r for `sandcall doctor`: the tier, then one line per layer.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tier: %s\n", r.Tier())
	for _, s := range r.Layers {
		state := "skipped"
		if s.Active {
			state = "active"
		}
		fmt.Fprintf(&b, "  %-9s %-7s %s\n", s.Layer, state, s.Reason)
	}
	return b.String()
}

func (r *Report) set(l Layer, active bool, format string, args ...any) {
	s := Status{Layer: l, Active: active, Reason: fmt.Sprintf(format, args...)}
	for i := range r.Layers {
		if r.Layers[i].Layer == l {
			r.Layers[i] = s
			return
		}
	}
	r.Layers = append(r.Layers, s)
}

// ordered sorts r.Layers into the order of Layers.
func (r Report) ordered() Report {
	var out []Status
	for _, l := range Layers {
		for _, s := range r.Layers {
			if s.Layer == l {
				out = append(out, s)
			}
		}
	}
	r.Layers = out
	return r
}

// Config says which layers Probe may use. The zero Config probes every layer
// and uses every one that works.
type Config struct {
	// Disable lists layers never to use, even where they work; each is
	// reported as skipped, "disabled by configuration".
	Disable []Layer

	// CgroupParent is a cgroup v2 directory delegated to this process, with
	// the memory and pids controllers enabled in its cgroup.subtree_control;
	// each worker gets a child directory in it. If empty, Probe looks for
	// one (the cgroup v2 directory this process is in, when writable and
	// delegated); if none is found, the cgroup layer is skipped.
	CgroupParent string

	// WorkerArgs are the arguments, after argv[0], that start a worker of
	// this binary, e.g. []string{"worker"}. Probe starts one such worker
	// with every candidate layer to check that the layers work end to end;
	// the worker's Enter notices the probe and exits at once. If nil, the
	// layers that need that check (userns, netns, ipcns, landlock, seccomp)
	// are skipped: an unchecked layer is never reported active.
	WorkerArgs []string

	// Executable is the binary Probe starts with WorkerArgs. If empty,
	// SelfExe: the running binary. Tests that confine workers of another
	// binary set it; that binary's directory must be searchable by the
	// unprivileged user a user namespace maps the worker to.
	Executable string
}

func (c Config) disabled(l Layer) bool {
	for _, d := range c.Disable {
		if d == l {
			return true
		}
	}
	return false
}

// Limits are a job's resource limits, applied by RestrictSelf inside the
// worker. A zero field leaves that limit at its safe default, as documented.
type Limits struct {
	// MemoryBytes is the job's memory limit. The Go memory limit
	// (GOMEMLIMIT) is set to it, and RLIMIT_AS to the worker's address
	// space size when RestrictSelf runs plus MemoryBytes plus
	// HeadroomBytes. If zero, neither is set (RLIMIT_AS stays unlimited).
	MemoryBytes int64
	// HeadroomBytes is the address space allowed beyond MemoryBytes for the
	// garbage collector's slack, runtime metadata and new thread stacks.
	// If zero, DefaultHeadroom.
	HeadroomBytes int64
	// CPUSeconds is RLIMIT_CPU, both soft and hard: past it the kernel sends
	// SIGKILL. Pass the wall-time limit plus a grace period, rounded up.
	// If zero, RLIMIT_CPU stays unlimited (the parent's deadline still
	// holds).
	CPUSeconds int
	// OpenFiles is RLIMIT_NOFILE. If zero, 16: enough for stdio, the two
	// pipes and the runtime's epoll and eventfd. It bounds new descriptors
	// only; descriptors already open stay usable.
	OpenFiles int
}

// DefaultHeadroom is the address space a worker may add beyond its size at
// RestrictSelf and its MemoryBytes. See rlimit_linux.go for the
// measurement behind it.
const DefaultHeadroom = 64 << 20

// EnvVar is the environment variable through which the parent tells a worker
// which layers to apply (Report.Environ sets it; Enter reads and clears it).
const EnvVar = "SANDCALL_CONFINE"
