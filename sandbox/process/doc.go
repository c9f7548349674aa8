// Package process is sandcall's process tier: a pre-forked pool of worker
// processes that run programs. A Pool implements sandbox.Executor;
// ServeWorker is the other end, the body of the binary's hidden worker
// subcommand.
//
// A job goes to a worker as a length-prefixed frame on a pipe; every tool
// call the program makes comes back as a frame and is answered by the
// sandbox.Host the job was given (the broker, in the server); logs stream
// back as they happen; the outcome ends the job. The worker is then kept for
// the next job of the same principal (Config.Reuse jobs at most) or killed
// and reaped in the background, while the pool keeps Config.Size fresh
// workers warm.
//
//	pool, _ := process.New(process.Config{Command: []string{exe, "worker"}, Reuse: 16})
//	defer pool.Close()
//	out := pool.Execute(ctx, job, host)
//
// # Security
//
// A worker serves one principal only (sandbox.Job.Principal), and each job
// gets fresh engine state (a new goja runtime, a new WebAssembly instance):
// what a program leaves in its runtime does not reach the next job, and
// what could (the worker's Go heap, its caches of compiled programs) belongs
// to the same principal. A worker is discarded after Config.Reuse jobs,
// after any job that did not end normally (a limit, a crash, a
// cancellation, a malformed frame) and when its resident memory passes
// Config.MaxRSS. Idle used workers are kept for 5 s at most, and at most
// Config.MaxRunning of them. With Reuse 1, one job per worker: nothing
// survives a run.
// A worker's environment holds only the Go runtime's settings (Config.Env
// adds what the operator chooses, such as the confinement token); its only
// open files are its pipes (inherited descriptors are marked close-on-exec
// first). Frames are capped per direction and a malformed frame kills the
// worker, never the server. A worker runs in its own process group with a
// parent-death signal, and is killed at its deadline plus Config.Grace.
// Package confine adds the kernel layers (rlimits, namespaces, Landlock,
// seccomp) inside the worker.
//
// # Limits
//
// At most Config.MaxRunning jobs run at once; the others wait in a bounded
// queue (Config.Queue, Config.QueueTimeout), then fail with E_BUSY; the wait
// does not count against the job's own time limit. Slots and queue places
// are shared fairly between principals (see Pool). The supervisor enforces
// each job's wall-clock deadline (a sandbox.Wall: held while a call waits for
// a person's approval, and the hold is relayed to the worker's engine in a
// hold frame, so both deadlines move by the wait) and its CPU time (the job's time limit
// plus 1 s, sampled from /proc); the worker's RLIMIT_CPU spans its life and
// is the backstop. How a worker that sent no outcome ended
// is classified: killed at the deadline → E_TIMEOUT, cancelled →
// E_CANCELLED, out of memory → E_MEMORY, Go stack overflow → E_STACK, the
// CPU limit → E_TIMEOUT, anything else → E_WORKER_CRASHED, with the logs
// streamed so far.
package process
