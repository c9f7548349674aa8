package confine

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// nsChild is the "ns" scenario of the test worker: it prints its user,
// network and IPC namespaces, its uid and gid maps and its capability sets,
// one "key<TAB>value" line each.
func nsChild() {
	var b strings.Builder
	for _, ns := range []string{"user", "net", "ipc"} {
		l, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			l = "error: " + err.Error()
		}
		b.WriteString(ns + "\t" + l + "\n")
	}
	for _, m := range []string{"uid_map", "gid_map"} {
		d, err := os.ReadFile("/proc/self/" + m)
		v := strings.Join(strings.Fields(string(d)), " ")
		if err != nil {
			v = "error: " + err.Error()
		}
		b.WriteString(m + "\t" + v + "\n")
	}
	st, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(st), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(k, "Cap") {
			b.WriteString(k + "\t" + strings.TrimSpace(v) + "\n")
		}
	}
	os.Stdout.WriteString(b.String())
}

// namespacesOnly probes with the namespaces as the only layers that change
// what the worker can read about itself.
func namespacesOnly(t *testing.T) Report {
	t.Helper()
	r := Probe(Config{WorkerArgs: workerArgs, Disable: []Layer{LayerLandlock, LayerSeccomp}})
	if !r.Active(LayerUserns) {
		t.Skipf("no user namespace here: %s", r)
	}
	return r
}

func nsOf(t *testing.T, r Report) map[string]string {
	t.Helper()
	cmd, stdout, stderr := startWorker(t, r, "ns")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("worker: %v\n%s", err, stderr)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			got[k] = v
		}
	}
	return got
}

// checkNamespaces asserts that a worker of r is in user, network and IPC
// namespaces of its own, as nobody mapped to this process's user (or to
// nobody when this process is root: then it stays unmapped, see
// SysProcAttr), with no capability at all.
func checkNamespaces(t *testing.T, r Report) {
	t.Helper()
	got := nsOf(t, r)
	for _, ns := range []string{"user", "net", "ipc"} {
		mine, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			t.Fatal(err)
		}
		if got[ns] == "" || strings.HasPrefix(got[ns], "error") || got[ns] == mine {
			t.Errorf("%s namespace of the worker %q, this process's %q: want a new one", ns, got[ns], mine)
		}
	}
	for _, m := range []string{"uid_map", "gid_map"} {
		if !strings.HasPrefix(got[m], "65534 ") || !strings.HasSuffix(got[m], " 1") {
			t.Errorf("%s of the worker %q: want nobody inside, one id", m, got[m])
		}
	}
	for _, c := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
		if got[c] != "0000000000000000" {
			t.Errorf("%s of the worker = %q, want none", c, got[c])
		}
	}
}

// In a cgo binary (this test binary under -race is one) the worker enters
// its namespaces itself, from the C constructor, so that the server starts
// it without CLONE_NEWUSER: Go's os/exec then uses vfork rather than a fork
// that copies the server's page tables. The worker ends in the same state
// as one the clone put in them.
func TestNamespacesEarly(t *testing.T) {
	if !earlyAvailable {
		t.Skip("not a cgo binary: no constructor")
	}
	r := namespacesOnly(t)
	if !r.nsEarly {
		t.Fatalf("a cgo binary should enter the namespaces from its constructor:\n%s", r)
	}
	if a := r.SysProcAttr(); a.Cloneflags&(syscall.CLONE_NEWUSER|syscall.CLONE_NEWNET|syscall.CLONE_NEWIPC) != 0 || a.UidMappings != nil {
		t.Errorf("SysProcAttr still asks the clone for namespaces: %+v", a)
	}
	if !strings.Contains(strings.Join(r.Environ(), " "), nsEnvVar+"=") {
		t.Errorf("Environ lacks %s: %q", nsEnvVar, r.Environ())
	}
	checkNamespaces(t, r)
}

// The clone-time namespaces stay the mode of a binary without cgo, and
// give the same worker.
func TestNamespacesByClone(t *testing.T) {
	preferCloneNS = true
	r := namespacesOnly(t)
	preferCloneNS = false
	if r.nsEarly {
		t.Fatal("preferCloneNS: the probe still chose the constructor")
	}
	if r.SysProcAttr().Cloneflags&syscall.CLONE_NEWUSER == 0 {
		t.Fatal("the clone does not create the user namespace")
	}
	checkNamespaces(t, r)
}

// A worker told that its constructor entered the namespaces refuses to run
// when it did not, and a malformed request is an error, never a worker
// left in the server's namespaces.
func TestNamespacesEarlyFailsClosed(t *testing.T) {
	if !earlyAvailable {
		t.Skip("not a cgo binary: no constructor")
	}
	checkFailsClosed(t, namespacesOnly(t), nsEnvVar, []envCase{
		{"", "not entered"},
		{nsEnvVar + "=", "invalid argument"},
		{nsEnvVar + "=12x", "invalid argument"},
		{nsEnvVar + "=1", "invalid argument"}, // not a namespace flag
	})
}
