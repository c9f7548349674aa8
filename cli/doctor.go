package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/confine"
)

const doctorExamples = `  sandcall doctor      # which isolation layers work on this machine
`

// cmdDoctor reports which confinement layers the process tier gets on this
// machine, by starting a real worker with each (the same probe serve runs).
func cmdDoctor(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "doctor", "", doctorExamples)
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErr(e, fs, "unexpected argument %q", pos[0])
	}
	rep := confine.Probe(confine.Config{WorkerArgs: workerArgs(sandbox.DefaultLimits().Resolve(), false, 1)})
	w := e.stdout
	fmt.Fprintf(w, "sandcall %s on %s/%s, %d CPUs\n\n", version, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Fprint(w, rep.String())
	fmt.Fprintln(w, "\nThe in-process tier (--isolation inprocess) has none of these: it is not a security boundary.")
	return exitOK
}
