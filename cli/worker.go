package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/confine"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/process"
	"github.com/sandcall/sandcall/sandbox/ts"
	"github.com/sandcall/sandcall/sandbox/wasm"
)

// workerArgs are the arguments that start a worker for jobs within limits.
// warmTS has each worker transpile a small TypeScript program once it has
// waited a second for a job (esbuild's first-call set-up, 1-10 ms, so that a
// TypeScript job does not pay it on its clock): worth it for a pool's
// workers kept warm, not for the one worker of `sandcall run`, whose start
// is the program's latency, and not for a worker taken as soon as it is
// ready, whose start is CPU the jobs need.
//
// reuse is how many jobs the worker will serve: its RLIMIT_CPU, which spans
// its whole life, is the backstop for that many jobs (the supervisor
// enforces each job's own CPU limit), plus its start-up.
func workerArgs(limits sandbox.Limits, warmTS bool, reuse int) []string {
	cpu := int((limits.Timeout + time.Second + time.Second - 1) / time.Second) // wall + 1 s grace, rounded up
	if reuse > 1 {
		cpu = cpu*reuse + 2
	}
	// A module's compilation is bounded by the run's own wall clock and
	// CPU limit in the worker, where a compile-time bomb costs only that
	// process; the budget is no shorter than the longest run, so a large
	// module compiling on a loaded machine fails only when the run would.
	compile := max(30, int((max(limits.Timeout, sandbox.MaxTimeout)+2*time.Second-1)/time.Second))
	args := []string{"worker",
		"--memory-bytes", strconv.FormatInt(limits.MemoryBytes, 10),
		"--compile-seconds", strconv.Itoa(compile),
		"--cpu-seconds", strconv.Itoa(cpu),
		"--reuse", strconv.Itoa(max(reuse, 1))}
	if warmTS {
		args = append(args, "--warm-ts")
	}
	return args
}

// cmdWorker is the hidden worker subcommand: jobs read from fd 3 (one, or
// up to --reuse of one principal), each with its tool calls, logs and
// outcome written as frames to fd 4. The server
// starts it; it is never run by hand.
func cmdWorker(ctx context.Context, e *env, args []string) int {
	// First, before anything else: confinement may replace this process
	// with a confined image of itself.
	rep, err := confine.Enter()
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall worker: confinement: %v\n", err)
		return exitFailure
	}
	fs := flag.NewFlagSet("sandcall worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	mem := fs.Int64("memory-bytes", sandbox.DefaultLimits().MemoryBytes, "")
	cpu := fs.Int("cpu-seconds", 0, "")
	warmTypeScript := fs.Bool("warm-ts", false, "")
	reuse := fs.Int("reuse", 1, "")
	compileSeconds := fs.Int("compile-seconds", 30, "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(e.stderr, "sandcall worker: %v\n", err)
		return exitUsage
	}
	// Caches of compiled programs and modules live as long as the worker:
	// with one job per worker there is nothing to reuse; a reused worker
	// serves one principal, so a cached program or module is that
	// principal's own (each job still gets a fresh runtime or instance).
	progs, modules, tsBytes := -1, -1, -1
	if *reuse > 1 {
		progs, modules, tsBytes = 16, 4, 2<<20
	}
	eng := js.New(js.Config{ProgramCacheSize: progs})
	tsx := ts.New(ts.Config{JS: eng, CacheBytes: tsBytes})
	// WebAssembly is compiled here, in the worker, where a compile-time
	// bomb or code that stalls the runtime costs only this process.
	// The supervisor kills the worker at a run's deadline and on
	// cancellation, so compiled code need not check for them at every loop
	// iteration (NoInterrupt; each check is a call into Go).
	w, err := wasm.New(wasm.Config{Compiler: true, NoInterrupt: true, CacheSize: modules,
		CompileTimeout: time.Duration(max(*compileSeconds, 1)) * time.Second})
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall worker: %v\n", err)
		return exitFailure
	}
	// The frame pipes go through Go's poller (non-blocking, before
	// confinement creates no more descriptors): the reader goroutine then
	// parks between frames instead of holding an OS thread in read(2),
	// which the scheduler had to wake and hand a P to for every result of
	// a fan-out (worker CPU per 1,000-call fan-out 33.9-34.0 ms vs
	// 37.4-44.5 ms, interleaved runs on a loaded 2-core VM).
	in, out := pollable(3, "frames-in"), pollable(4, "frames-out")
	err = process.ServeWorker(ctx, in, out, process.WorkerConfig{
		// TypeScript is transpiled here too, not in the server: esbuild's
		// parser takes superlinear time on some inputs and cannot be
		// interrupted; a worker is killed at the deadline (see sandbox/ts).
		Executor:    sandbox.Languages{sandbox.JavaScript: eng, sandbox.TypeScript: tsx, sandbox.WASM: w},
		MemoryBytes: *mem,
		Jobs:        *reuse,
		// Without --warm-ts the worker was started for one program (see
		// workerArgs): its start-up is that program's latency.
		KeepWarmGarbage: !*warmTypeScript,
		Warm:            func() { warmEngine(eng) },
		WarmIdle: func() {
			if *warmTypeScript {
				warmTS(tsx)
			}
		},
		Restrict: func() error {
			return confine.RestrictSelf(rep, confine.Limits{MemoryBytes: *mem, CPUSeconds: *cpu})
		},
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall worker: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// pollable returns fd as a file served by Go's poller (see cmdWorker); if
// the descriptor cannot be made non-blocking it stays a blocking one.
func pollable(fd uintptr, name string) *os.File {
	_ = syscall.SetNonblock(int(fd), true)
	return os.NewFile(fd, name)
}

// warmEngine runs a small program once so that everything the engine builds
// lazily (the prelude, built-ins the hardening touches, the converters) is
// ready before the worker is confined and before the job's clock starts.
func warmEngine(eng *js.Engine) {
	job := &sandbox.Job{Program: sandbox.Program{Source: `const r = await tools.call("warm", {a: [1, "x"]}).catch(e => e.code); return [r, JSON.stringify({b: 1})]`},
		Limits: sandbox.Limits{Timeout: 5 * time.Second}.Resolve(), Tools: []string{"warm"}}
	eng.Execute(context.Background(), job, warmHost{})
}

// warmTS transpiles and runs a small TypeScript program once, so that
// esbuild's lazily built tables are ready before the job's clock starts.
func warmTS(ex *ts.Executor) {
	job := &sandbox.Job{Program: sandbox.Program{Language: sandbox.TypeScript,
		Source: "interface W { a: number }\nconst w: W = { a: 1 }\nreturn w.a as number"},
		Limits: sandbox.Limits{Timeout: 5 * time.Second}.Resolve()}
	ex.Execute(context.Background(), job, warmHost{})
}

type warmHost struct{}

func (warmHost) Call(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"ok":[1,2.5,"s",null,true]}`), nil
}
