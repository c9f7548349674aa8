package js

import (
	"math/rand/v2"
	"time"

	"github.com/dop251/goja"
	"github.com/sandcall/sandcall/sandbox"
)

// fixClock makes the run replayable (sandbox.Job.Seed and Clock): with a
// Clock, Date reads that one instant for the whole run; Math.random is a
// PCG generator seeded per run. Two runs of one job with the same Seed and
// Clock take the same path up to their tool results. Without a Clock, Date
// reads the real time (a program may wait on it).
func fixClock(rt *goja.Runtime, job *sandbox.Job) {
	if now := job.Clock; !now.IsZero() {
		rt.SetTimeSource(func() time.Time { return now })
	}
	seed := job.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	g := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	rt.SetRandSource(g.Float64)
}
