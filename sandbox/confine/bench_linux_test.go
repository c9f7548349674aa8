package confine

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWorkerStart measures starting a worker (this test binary) that
// runs Enter and RestrictSelf and exits, with each layer alone and all
// together. Subtract "none" for a layer's cost.
func BenchmarkWorkerStart(b *testing.B) {
	all := []Layer{LayerPgroup, LayerPdeathsig, LayerRlimits, LayerUserns, LayerNetns, LayerIPCns, LayerLandlock, LayerSeccomp, LayerCgroup}
	only := func(keep ...Layer) []Layer {
		var d []Layer
		for _, l := range all {
			found := false
			for _, k := range keep {
				found = found || k == l
			}
			if !found {
				d = append(d, l)
			}
		}
		return d
	}
	for _, bc := range []struct {
		name string
		keep []Layer
	}{
		{"none", nil},
		{"pgroup+pdeathsig", []Layer{LayerPgroup, LayerPdeathsig}},
		{"rlimits", []Layer{LayerRlimits}},
		{"userns", []Layer{LayerUserns}},
		{"netns", []Layer{LayerNetns}},
		{"ipcns", []Layer{LayerIPCns}},
		{"userns+netns+ipcns", []Layer{LayerUserns, LayerNetns, LayerIPCns}},
		{"landlock", []Layer{LayerLandlock}},
		{"seccomp", []Layer{LayerSeccomp}},
		{"all", all},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := Probe(Config{WorkerArgs: workerArgs, Disable: only(bc.keep...)})
			for _, l := range bc.keep {
				if l != LayerCgroup && !r.Active(l) {
					b.Skipf("%s unavailable:\n%s", l, r)
				}
			}
			for b.Loop() {
				cmd := exec.Command(SelfExe, "confine-child", "exit")
				cmd.Env = r.Environ()
				cmd.Dir = "/"
				cmd.SysProcAttr = r.SysProcAttr()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
		})
	}
}

// BenchmarkWorkerStartLargeServer starts a worker with every namespace from
// a parent holding a large live heap, as a busy server does: with the
// namespaces entered by the worker's C constructor ("early") Go starts it
// with vfork; with the clone creating them ("clone") it forks the parent,
// copying its page tables, and the parent then takes a copy-on-write fault
// on each page it writes. parent-cpu-ms/op is this process's CPU per start
// (user and system), the writes after each start included.
func BenchmarkWorkerStartLargeServer(b *testing.B) {
	heap := make([][]byte, 256)
	for i := range heap {
		heap[i] = make([]byte, 1<<20)
		for j := 0; j < len(heap[i]); j += 4096 {
			heap[i][j] = 1
		}
	}
	for _, mode := range []string{"early", "clone"} {
		b.Run(mode, func(b *testing.B) {
			preferCloneNS = mode == "clone"
			r := Probe(Config{WorkerArgs: workerArgs, Disable: []Layer{LayerLandlock, LayerSeccomp, LayerCgroup}})
			preferCloneNS = false
			if !r.Active(LayerUserns) || r.nsEarly != (mode == "early") {
				b.Skipf("mode %s unavailable:\n%s", mode, r)
			}
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			for b.Loop() {
				cmd := exec.Command(SelfExe, "confine-child", "exit")
				cmd.Env = r.Environ()
				cmd.Dir = "/"
				cmd.SysProcAttr = r.SysProcAttr()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				// The server goes on writing its heap.
				for i := range heap {
					for j := 0; j < len(heap[i]); j += 4096 {
						heap[i][j]++
					}
				}
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			cpu := time.Duration(syscall.TimevalToNsec(ru1.Utime)-syscall.TimevalToNsec(ru0.Utime)) +
				time.Duration(syscall.TimevalToNsec(ru1.Stime)-syscall.TimevalToNsec(ru0.Stime))
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "parent-cpu-ms/op")
		})
	}
	runtime.KeepAlive(heap)
}
