package confine

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// readThreads prints, for the main thread and 8 other locked threads, what
// reading /etc/hostname and the worker's own binary gave.
func readThreads() {
	var mu sync.Mutex
	var wg sync.WaitGroup
	hold := make(chan struct{})
	report := func(who string) {
		_, errHost := os.ReadFile("/etc/hostname")
		f, errExe := os.Open("/proc/self/exe")
		if errExe == nil {
			f.Close()
		}
		mu.Lock()
		fmt.Printf("%s\t%v\t%v\n", who, errHost, errExe)
		mu.Unlock()
	}
	for i := range 8 {
		wg.Add(1)
		go func() {
			runtime.LockOSThread() // held to the end: 8 distinct threads
			report(fmt.Sprintf("thread%d", i))
			wg.Done()
			<-hold
		}()
	}
	wg.Wait()
	report("main")
	close(hold)
}

// landlockOnly probes with Landlock as the only layer that denies reads.
func landlockOnly(t *testing.T) Report {
	t.Helper()
	r := Probe(Config{WorkerArgs: workerArgs, Disable: []Layer{LayerSeccomp, LayerUserns, LayerNetns, LayerIPCns}})
	if !r.Active(LayerLandlock) {
		t.Skipf("no Landlock here: %s", r)
	}
	return r
}

func readThreadsIn(t *testing.T, r Report) map[string][2]string {
	t.Helper()
	cmd, stdout, stderr := startWorker(t, r, "read-threads")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("worker: %v\n%s", err, stderr)
	}
	got := map[string][2]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		f := strings.Split(line, "\t")
		if len(f) == 3 {
			got[f[0]] = [2]string{f[1], f[2]}
		}
	}
	if len(got) != 9 {
		t.Fatalf("want 9 threads' reports, got %q", stdout)
	}
	return got
}

// In a cgo binary (this test binary under -race is one) the probe chooses
// the C constructor, and its domain holds on every thread without a re-exec;
// it grants nothing, not even the read of the binary the re-exec needed.
func TestLandlockModeOfThisBinary(t *testing.T) {
	r := landlockOnly(t)
	want := landlockAllThreads
	if !allThreadsWorks() {
		want = landlockEarly
	}
	if r.landlock != want {
		t.Fatalf("landlock mode %q, want %q:\n%s", r.landlock, want, r)
	}
	for who, errs := range readThreadsIn(t, r) {
		for i, e := range errs {
			if !strings.Contains(e, "permission denied") {
				t.Errorf("%s: read %d under Landlock (%s) gave %q, want permission denied", who, i, r.landlock, e)
			}
		}
	}
}

// The re-exec stays a working fallback for a cgo binary.
func TestLandlockExecFallback(t *testing.T) {
	if allThreadsWorks() {
		t.Skip("not a cgo binary: the re-exec is never chosen")
	}
	preferExec = true
	r := landlockOnly(t)
	preferExec = false
	if r.landlock != landlockExec {
		t.Fatalf("landlock mode %q, want %q", r.landlock, landlockExec)
	}
	for who, errs := range readThreadsIn(t, r) {
		if !strings.Contains(errs[0], "permission denied") {
			t.Errorf("%s: read of /etc/hostname gave %q, want permission denied", who, errs[0])
		}
		if errs[1] != "<nil>" {
			t.Errorf("%s: the re-exec's ruleset should still grant its own binary: %q", who, errs[1])
		}
	}
}

// A worker told to expect the constructor's domain refuses to run without
// it, and a malformed request is an error, never a weaker domain.
func TestLandlockEarlyFailsClosed(t *testing.T) {
	if allThreadsWorks() {
		t.Skip("not a cgo binary: no constructor")
	}
	checkFailsClosed(t, landlockOnly(t), earlyEnvVar, []envCase{
		{"", "not entered"},
		{earlyEnvVar + "=8:1", "invalid argument"},
		{earlyEnvVar + "=24:1:2:3x", "invalid argument"},
	})
}

// envCase is a value of the constructor's variable (or none, ""), and
// what the worker's failure must name.
type envCase struct{ env, want string }

// checkFailsClosed starts a worker of r with each case's value of envVar
// in place of r's, and checks that it refuses to run.
func checkFailsClosed(t *testing.T, r Report, envVar string, cases []envCase) {
	t.Helper()
	for _, tc := range cases {
		var env []string
		for _, e := range r.Environ() {
			if !strings.HasPrefix(e, envVar+"=") {
				env = append(env, e)
			}
		}
		if tc.env != "" {
			env = append(env, tc.env)
		}
		cmd, _, stderr := startWorkerEnv(t, r, env, "exit")
		err := cmd.Wait()
		if err == nil || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("env %q: worker ended with %v, stderr %q; want a failure naming %q", tc.env, err, stderr, tc.want)
		}
	}
}
