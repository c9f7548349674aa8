// Package process is sandcall's process tier: a pre-forked pool of worker
// processes that run one program each. A Pool implements sandbox.Executor;
// ServeWorker is the other end, the body of the binary's hidden worker
// subcommand.
//
// A job goes to a warm worker as a length-prefixed frame on a pipe; every
// tool call the program makes comes back as a frame and is answered by the
// sandbox.Host the job was given (the broker, in the server); logs stream
// back as they happen; the outcome ends the job, and the worker is killed
// and reaped in the background while the pool starts a replacement.
//
//	pool, _ := process.New(process.Config{Command: []string{exe, "worker"}})
//	defer pool.Close()
//	out := pool.Execute(ctx, job, host)
//
// # Security
//
// One job per worker: nothing a program leaves behind reaches the next one.
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
// A job that finds every worker busy waits in a bounded queue (Config.Queue,
// Config.QueueTimeout), then fails with E_BUSY; the wait does not count
// against the job's own time limit. How a worker that sent no outcome ended
// is classified: killed at the deadline → E_TIMEOUT, cancelled →
// E_CANCELLED, out of memory → E_MEMORY, Go stack overflow → E_STACK, the
// CPU limit → E_TIMEOUT, anything else → E_WORKER_CRASHED, with the logs
// streamed so far.
package process
