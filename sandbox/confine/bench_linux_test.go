package confine

import (
	"os/exec"
	"testing"
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
