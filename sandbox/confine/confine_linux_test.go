package confine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sandcall/sandcall/internal/testenv"
)

// TestMain doubles as the worker: started as "confine-child <scenario>",
// the test binary behaves like a sandcall worker and runs one scenario.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "confine-child" {
		childMain(os.Args[2], os.Args[3:])
		return
	}
	os.Exit(m.Run())
}

var workerArgs = []string{"confine-child", "probe"}

var (
	probeOnce sync.Once
	probed    Report
)

func probe(t testing.TB) Report {
	probeOnce.Do(func() { probed = Probe(Config{WorkerArgs: workerArgs}) })
	t.Helper()
	return probed
}

func childMain(scenario string, args []string) {
	r, err := Enter() // first, as in a real worker
	if err != nil {
		fmt.Fprintln(os.Stderr, "enter:", err)
		os.Exit(3)
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "restrict:", err)
		os.Exit(3)
	}
	switch scenario {
	case "probe":
		fmt.Fprintln(os.Stderr, "probe worker: Enter returned")
		os.Exit(4)
	case "exit":
		if err := RestrictSelf(r, Limits{MemoryBytes: 256 << 20, CPUSeconds: 10}); err != nil {
			fail(err)
		}
		os.Exit(0)
	case "restrict":
		if err := RestrictSelf(r, Limits{CPUSeconds: 30}); err != nil {
			fail(err)
		}
		report := func(name string, err error) { fmt.Printf("%s\t%v\n", name, err) }
		_, err := os.ReadFile("/etc/hostname")
		report("read", err)
		report("exec", exec.Command("/bin/true").Run())
		c, err := net.DialTimeout("tcp", "1.1.1.1:53", 2*time.Second)
		if err == nil {
			c.Close()
		}
		report("dial", err)
		_, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
		report("socket", err)
		report("write", os.WriteFile(args[0], []byte("x"), 0o644))
		report("threads", spawnThreads(8))
		report("kill1", unix.Kill(1, 0))
		report("killself", unix.Kill(os.Getpid(), 0))
		os.Exit(0)
	case "oom-grow", "oom-big":
		if err := RestrictSelf(r, Limits{MemoryBytes: 256 << 20, CPUSeconds: 30}); err != nil {
			fail(err)
		}
		if scenario == "oom-big" {
			// new Array(2**28): 2^28 interface values, 4 GiB in one go.
			a := make([]any, 1<<28)
			fmt.Println(len(a))
		}
		// 'x'.repeat(...) in a loop: 16 MiB pieces, all live, touched.
		var keep [][]byte
		for {
			b := bytes.Repeat([]byte{'x'}, 16<<20)
			keep = append(keep, b)
		}
	case "spawn":
		// The middle process of the pdeathsig test, standing for the
		// server: start a worker, print its pid, wait to be killed.
		r = Probe(Config{WorkerArgs: workerArgs})
		cmd := exec.Command(SelfExe, "confine-child", "sleep")
		cmd.Env = r.Environ()
		cmd.SysProcAttr = r.SysProcAttr()
		if err := cmd.Start(); err != nil {
			fail(err)
		}
		fmt.Println(cmd.Process.Pid)
		time.Sleep(time.Minute)
	case "sleep":
		time.Sleep(time.Minute)
	case "ns":
		nsChild()
		os.Exit(0)
	case "read-threads":
		// Reads from many OS threads at once, the worker's own binary
		// included: a domain that missed a thread shows here.
		readThreads()
		os.Exit(0)
	}
	os.Exit(5)
}

func TestProbeReport(t *testing.T) {
	r := probe(t)
	t.Logf("\n%s", r)
	if len(r.Layers) != len(Layers) {
		t.Errorf("Probe reported %d layers, want %d", len(r.Layers), len(Layers))
	}
	for _, s := range r.Layers {
		if s.Reason == "" {
			t.Errorf("%s has no reason", s.Layer)
		}
	}
}

func TestProbeWithoutWorkerArgs(t *testing.T) {
	r := Probe(Config{})
	for _, l := range []Layer{LayerUserns, LayerNetns, LayerLandlock, LayerSeccomp} {
		if r.Active(l) {
			t.Errorf("%s active without a verifying worker", l)
		}
	}
}

func TestProbeDisable(t *testing.T) {
	r := Probe(Config{WorkerArgs: workerArgs, Disable: []Layer{LayerSeccomp, LayerUserns}})
	if r.Active(LayerSeccomp) || r.Active(LayerUserns) {
		t.Errorf("disabled layers active:\n%s", r)
	}
}

// startWorker starts the test binary as a worker of r.
func startWorker(t testing.TB, r Report, scenario string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	return startWorkerEnv(t, r, r.Environ(), scenario, args...)
}

// startWorkerEnv starts the test binary as a worker of r with env.
func startWorkerEnv(t testing.TB, r Report, env []string, scenario string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(SelfExe, append([]string{"confine-child", scenario}, args...)...)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.SysProcAttr = r.SysProcAttr()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	return cmd, &stdout, &stderr
}

func TestRestrictSelf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		disable []Layer
	}{
		{"all", nil},
		{"landlock-only", []Layer{LayerSeccomp, LayerUserns, LayerNetns, LayerIPCns}},
		{"seccomp-only", []Layer{LayerLandlock, LayerUserns, LayerNetns, LayerIPCns}},
		{"namespaces-only", []Layer{LayerLandlock, LayerSeccomp}},
		{"rlimits-only", []Layer{LayerLandlock, LayerSeccomp, LayerUserns, LayerNetns, LayerIPCns}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testRestrictSelf(t, Probe(Config{WorkerArgs: workerArgs, Disable: tc.disable}))
		})
	}
}

func testRestrictSelf(t *testing.T, r Report) {
	target := filepath.Join(t.TempDir(), "written")
	if err := os.Chmod(filepath.Dir(target), 0o777); err != nil {
		t.Fatal(err)
	}
	cmd, stdout, stderr := startWorker(t, r, "restrict", target)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("worker: %v\n%s", err, stderr)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		k, v, _ := strings.Cut(line, "\t")
		got[k] = v
	}
	t.Logf("tier %s: %v", r.Tier(), got)
	ok := func(k string) bool { return got[k] == "<nil>" }
	if !ok("threads") || !ok("killself") {
		t.Errorf("the worker cannot make threads or signal itself: %v", got)
	}
	switch {
	case r.Active(LayerSeccomp):
		if !strings.Contains(got["read"], "operation not permitted") {
			t.Errorf("read /etc/hostname under seccomp: %q, want EPERM", got["read"])
		}
	case r.Active(LayerLandlock):
		if !strings.Contains(got["read"], "permission denied") {
			t.Errorf("read /etc/hostname under landlock: %q, want EACCES", got["read"])
		}
	default:
		t.Log("read not checked: neither landlock nor seccomp active")
	}
	if r.Active(LayerLandlock) && !r.Active(LayerSeccomp) && ok("exec") {
		t.Error("exec succeeded under landlock")
	}
	if r.Active(LayerSeccomp) {
		for _, k := range []string{"exec", "socket", "dial", "kill1"} {
			if !strings.Contains(got[k], "operation not permitted") {
				t.Errorf("%s under seccomp: %q, want EPERM", k, got[k])
			}
		}
	} else {
		t.Log("exec/socket not checked: seccomp inactive")
	}
	if r.Active(LayerNetns) && ok("dial") {
		t.Error("dial succeeded in a network namespace")
	}
	if r.Active(LayerRlimits) {
		if ok("write") {
			t.Error("writing a file succeeded")
		}
		if b, err := os.ReadFile(target); err == nil && len(b) > 0 {
			t.Errorf("worker wrote %q", b)
		}
	}
}

// oomBinary returns a test binary without the race detector (RLIMIT_AS
// cannot coexist with its shadow memory).
func oomBinary(t *testing.T) string {
	if !testenv.Race {
		return os.Args[0]
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		t.Skipf("race build, and no go command to build a race-free worker: %v", err)
	}
	out := filepath.Join(t.TempDir(), "confine.test")
	if err := os.Chmod(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gobin, "test", "-c", "-o", out, ".")
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build race-free worker: %v\n%s", err, b)
	}
	return out
}

func TestOutOfMemory(t *testing.T) {
	r := probe(t)
	if !r.Active(LayerRlimits) {
		t.Skip("rlimits layer inactive")
	}
	bin := oomBinary(t)
	for _, scenario := range []string{"oom-big", "oom-grow"} {
		t.Run(scenario, func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := exec.Command(bin, "confine-child", scenario)
			cmd.Env = r.Environ()
			cmd.Dir = "/"
			cmd.SysProcAttr = r.SysProcAttr()
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			if err == nil {
				t.Fatal("worker survived")
			}
			maxRSS := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
			t.Logf("died after %v: %v; peak RSS %d MiB", took, err, maxRSS>>20)
			if !strings.Contains(stderr.String(), "out of memory") {
				t.Errorf("stderr does not say out of memory:\n%.2000s", stderr.String())
			}
			if limit := int64(256 << 20); maxRSS > limit*5/4 {
				t.Errorf("peak RSS %d MiB > 1.25 x %d MiB", maxRSS>>20, limit>>20)
			}
		})
	}
}

func TestPdeathsig(t *testing.T) {
	r := probe(t)
	if !r.Active(LayerPdeathsig) {
		t.Skip("pdeathsig inactive")
	}
	mid := exec.Command(SelfExe, "confine-child", "spawn")
	var stderr bytes.Buffer
	mid.Stderr = &stderr
	out, err := mid.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := mid.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	if pid == 0 {
		mid.Process.Kill()
		mid.Wait()
		t.Fatalf("middle process printed no pid; stderr: %s", &stderr)
	}
	// A pidfd of the worker becomes readable when it exits: wait on it
	// rather than poll /proc. It is opened before the kill, so the pid
	// cannot have been reused.
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		mid.Process.Kill()
		mid.Wait()
		t.Skipf("pidfd_open: %v", err)
	}
	defer unix.Close(pfd)
	mid.Process.Kill()
	mid.Wait()
	// A hang guard, not a speed limit: the kernel signals the worker as
	// its parent dies.
	fds := []unix.PollFd{{Fd: int32(pfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 60_000)
		if err == unix.EINTR {
			continue
		}
		if n == 1 { // the worker exited
			return
		}
		unix.Kill(pid, unix.SIGKILL)
		t.Fatalf("worker %d outlived its parent by a minute (poll: %d, %v)", pid, n, err)
	}
}

func TestSeccompProgram(t *testing.T) {
	p, err := seccompProgram(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	t.Logf("%d instructions", len(p))
}

func TestCgroupReason(t *testing.T) {
	r := probe(t)
	for _, s := range r.Layers {
		if s.Layer == LayerCgroup {
			t.Logf("cgroup: active=%v: %s", s.Active, s.Reason)
		}
	}
	if _, err := r.NewCgroup("x", 1<<20, 10); r.Active(LayerCgroup) == errors.Is(err, ErrNoCgroup) {
		t.Errorf("NewCgroup: %v with cgroup active=%v", err, r.Active(LayerCgroup))
	}
}
