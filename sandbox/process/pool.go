package process

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// Config configures a Pool. Zero values are the documented defaults.
type Config struct {
	// Command starts one worker: a path and its arguments. If empty, this
	// executable re-executed with the hidden "worker" subcommand.
	Command []string
	// Size is the number of warm workers kept ready at rest. If zero, 1.
	Size int
	// MaxWarm is the most warm workers kept ready, or starting, while
	// demand calls for more than Size (see Pool). If zero, Size or the
	// number of CPUs, whichever is larger.
	MaxWarm int
	// MaxRunning is how many jobs run at once, all principals together. If
	// zero, 4 × the number of CPUs.
	MaxRunning int
	// Queue is how many jobs may wait for a running slot when all are
	// taken; past it a job gets E_BUSY at once (unless its principal holds
	// less of the queue than another, see Pool). If zero, 128 or 16 × the
	// number of CPUs, whichever is larger: a burst of 64 small runs waits
	// instead of failing. Negative means no queue.
	Queue int
	// QueueTimeout is how long a job may wait for a worker before E_BUSY.
	// Waiting does not count against the job's own time limit. If zero,
	// 30 s.
	QueueTimeout time.Duration
	// Reuse is how many jobs one worker serves, all for the same principal
	// (sandbox.Job.Principal), before it is discarded. A worker is also
	// discarded after any job that did not end normally (time, memory or
	// CPU limit, crash, cancellation, a malformed frame) and when its
	// resident memory grows past MaxRSS. If zero or one, one job per worker.
	Reuse int
	// MaxRSS is the resident memory, measured when a job ends, past which
	// a worker is not reused. If zero, 192 MiB. (Between jobs a worker
	// collects its garbage and returns what it does not keep to the system,
	// but a job's garbage is still resident when it ends.)
	MaxRSS int64
	// Grace is how long past a job's deadline the supervisor waits for the
	// worker's own E_TIMEOUT before it kills the worker. If zero, 100 ms.
	Grace time.Duration
	// StartTimeout bounds a worker's start-up (until it reports ready). If
	// zero, 10 s.
	StartTimeout time.Duration
	// MemoryBytes is the per-worker memory ceiling, handed to the worker as
	// GOMEMLIMIT; the worker's own rlimits are set by its Restrict hook. If
	// zero, the default run limit (256 MiB).
	MemoryBytes int64
	// SysProcAttr, if set, is used to start workers (namespaces, a
	// parent-death signal). Setpgid and Pdeathsig are always forced on.
	SysProcAttr *syscall.SysProcAttr
	// Env is the worker's whole environment besides GOMEMLIMIT. If nil,
	// empty: a worker holds no tokens or configuration.
	Env []string
	// Logger receives operational messages. If nil, discarded.
	Logger *slog.Logger
	// OnStart, if set, is called with each worker's PID once it has started
	// (to place it in a cgroup, say). An error kills the worker.
	OnStart func(pid int) error
	// OnExit, if set, is called with each worker's PID after it is reaped.
	OnExit func(pid int)
	// OnJob, if set, is called with the worker's PID and the job's
	// principal before each job is sent to a worker.
	OnJob func(pid int, principal string)
	// NoRefill starts Size workers once and never replaces them: for a
	// command that runs one program and exits. If false, the pool refills.
	// With NoRefill a worker that fails to start is not retried: jobs
	// waiting for it fail at once with E_WORKER_CRASHED, and StartFailed
	// reports it.
	NoRefill bool
}

// Pool runs jobs in pre-forked worker processes. It implements
// sandbox.Executor and is safe for concurrent use.
//
// Capacity is shared fairly between principals (sandbox.Job.Principal): at
// most Config.MaxRunning jobs run at once and the rest wait in one queue;
// while others wait, a freed slot goes to the waiting principal with the
// fewest jobs running, and a principal holding the most of a full queue
// gives up its newest place to a newcomer holding less. Alone, a principal
// may use the whole pool and the whole queue.
//
// Warm workers are kept for demand: Config.Size of them at rest, and while
// jobs take them, as many as are taken within twice the time a start takes
// at the busiest second of the last few seconds (or as many as jobs wait
// for, if more), up to Config.MaxWarm; several start at once. Warm workers
// past Size go when no job has taken one for a few seconds, and so do used
// workers kept idle for their principal: after a burst the pool is back to
// Size warm workers within seconds. A worker idle for a second gives its
// unused memory back (WorkerConfig.IdleRelease).
type Pool struct {
	cfg     Config
	maxWarm int
	log     *slog.Logger
	ready   chan *worker
	kick    chan struct{} // the filler looks again (capacity 1)
	sched   *sched

	ctx    context.Context
	cancel context.CancelFunc
	fillWG sync.WaitGroup
	// afterFunc is context.AfterFunc (a test delays what it runs: the
	// kill a job's cancellation sets off runs on a goroutine of its own).
	afterFunc func(context.Context, func()) func() bool
	running   atomic.Int32 // jobs running now
	// wanting counts jobs waiting for a fresh worker. A start is niced only
	// while no job waits for it.
	wanting atomic.Int32

	failed     chan struct{} // closed when a NoRefill pool's worker did not start
	failedOnce sync.Once

	mu       sync.Mutex // guards the fields below
	live     map[*worker]struct{}
	lastErr  error
	demand   demand
	starting map[int]struct{} // PIDs of workers starting, before they report ready
	nstart   int              // starts in progress, including those not yet spawned
	backoff  time.Duration    // after a failed start; 0 when the last start succeeded
	retryAt  time.Time        // no start before this after a failure
}

var _ sandbox.Executor = (*Pool)(nil)

// New starts a pool and begins filling it in the background.
func New(cfg Config) (*Pool, error) {
	if len(cfg.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("process: cannot find this executable: %w", err)
		}
		cfg.Command = []string{exe, "worker"}
	}
	cfg.Command = append([]string(nil), cfg.Command...)
	if cfg.Size <= 0 {
		cfg.Size = 1
	}
	if cfg.MaxWarm <= 0 {
		cfg.MaxWarm = runtime.NumCPU()
	}
	cfg.MaxWarm = max(cfg.MaxWarm, cfg.Size)
	if cfg.NoRefill {
		cfg.MaxWarm = cfg.Size
	}
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = 4 * runtime.NumCPU()
	}
	if cfg.Queue == 0 {
		cfg.Queue = max(128, 16*runtime.NumCPU())
	}
	if cfg.Queue < 0 {
		cfg.Queue = 0
	}
	if cfg.QueueTimeout <= 0 {
		cfg.QueueTimeout = 30 * time.Second
	}
	if cfg.Reuse <= 0 {
		cfg.Reuse = 1
	}
	if cfg.MaxRSS <= 0 {
		cfg.MaxRSS = 192 << 20
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 100 * time.Millisecond
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	if cfg.MemoryBytes <= 0 {
		cfg.MemoryBytes = sandbox.DefaultLimits().MemoryBytes
	}
	cfg.Env = append([]string(nil), cfg.Env...)
	p := &Pool{
		afterFunc: context.AfterFunc,
		cfg:       cfg,
		log:       cfg.Logger,
		ready:     make(chan *worker, cfg.MaxWarm),
		kick:      make(chan struct{}, 1),
		sched:     newSched(cfg.MaxRunning, cfg.Queue, cfg.MaxRunning),
		live:      make(map[*worker]struct{}),
		starting:  make(map[int]struct{}),
		failed:    make(chan struct{}),
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	closeOnExecInherited()
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.fillWG.Add(2)
	go p.fill()
	go p.expireIdle()
	return p, nil
}

// Ready returns the number of warm workers waiting for a job.
func (p *Pool) Ready() int { return len(p.ready) }

// StartFailed reports whether a worker of a NoRefill pool failed to start.
func (p *Pool) StartFailed() bool {
	select {
	case <-p.failed:
		return true
	default:
		return false
	}
}

// Idle returns the number of used workers kept for their principal's next
// job.
func (p *Pool) Idle() int {
	p.sched.mu.Lock()
	defer p.sched.mu.Unlock()
	return len(p.sched.idle)
}

// Size returns the number of warm workers the pool keeps at rest.
func (p *Pool) Size() int { return p.cfg.Size }

// Close stops refilling and kills every worker, idle or busy. Jobs running
// on killed workers end with E_CANCELLED.
func (p *Pool) Close() error {
	p.cancel()
	p.killLive() // starting workers too: their starts end now
	p.fillWG.Wait()
	for _, w := range p.killLive() {
		w.release()
	}
	return nil
}

// killLive kills every live worker and returns them.
func (p *Pool) killLive() []*worker {
	p.mu.Lock()
	ws := make([]*worker, 0, len(p.live))
	for w := range p.live {
		ws = append(ws, w)
	}
	p.mu.Unlock()
	for _, w := range ws {
		w.kill(endShutdown)
	}
	return ws
}

// Execute implements sandbox.Executor: it waits for a running slot (see
// Pool), takes an idle worker that served the job's principal or else a
// warm one, sends it the job, answers its tool calls through host, and
// afterwards keeps the worker for the principal's next job or discards it
// (Config.Reuse).
func (p *Pool) Execute(ctx context.Context, job *sandbox.Job, host sandbox.Host) *sandbox.Outcome {
	if p.ctx.Err() != nil {
		return &sandbox.Outcome{Err: sandbox.Errorf(sandbox.ECancelled, "", "the server is shutting down")}
	}
	if err := p.sched.admit(ctx, p.ctx, job.Principal, p.cfg.QueueTimeout); err != nil {
		if err.Code == sandbox.EBusy {
			err = p.busy(err.Message)
		}
		return &sandbox.Outcome{Err: err}
	}
	w, err := p.acquire(ctx, job.Principal)
	if err != nil {
		p.sched.done(job.Principal)
		return &sandbox.Outcome{Err: err}
	}
	if p.cfg.OnJob != nil {
		p.cfg.OnJob(w.cmd.Process.Pid, job.Principal)
	}
	p.running.Add(1)
	o, reusable := w.run(ctx, job, host, p.cfg.Grace)
	p.running.Add(-1)
	// A job whose context ended may have its worker's kill on the way (the
	// context.AfterFunc of w.run runs on a goroutine of its own, and the
	// outcome can arrive first): such a worker never serves another job,
	// which it would find cancelled at once (a suspended run's worker,
	// reused for its replay).
	if ctx.Err() != nil {
		reusable = false
	}
	if reusable && w.jobs < p.cfg.Reuse && p.ctx.Err() == nil && w.endStat() <= p.cfg.MaxRSS {
		// Kept before the slot is passed on, so that the principal's next
		// job finds it.
		for _, old := range p.sched.putIdle(job.Principal, w) {
			old.discard()
		}
	} else {
		w.discard()
	}
	p.sched.done(job.Principal)
	return o
}

// acquire returns a worker for principal's job: one of its idle workers, or
// a warm unused one.
func (p *Pool) acquire(ctx context.Context, principal string) (*worker, *sandbox.Error) {
	if w := p.sched.takeIdle(principal); w != nil {
		if w.principal == principal {
			return w, nil
		}
		// Cannot happen (idle workers are kept per principal); if it did,
		// the worker is discarded, never handed over.
		p.log.Error("an idle worker was offered to another principal; discarding it")
		w.discard()
	}
	var w *worker
	select {
	case w = <-p.ready:
	default:
		// A job now waits for a worker being started: none may start at
		// low priority behind the running jobs, and the filler may need to
		// start more.
		p.wanting.Add(1)
		defer p.wanting.Add(-1)
		p.mu.Lock()
		for pid := range p.starting {
			_ = syscall.Setpriority(syscall.PRIO_PGRP, pid, 0)
		}
		p.mu.Unlock()
		p.kickFill()
		t := time.NewTimer(p.cfg.QueueTimeout)
		defer t.Stop()
		select {
		case w = <-p.ready:
		case <-t.C:
			return nil, p.busy(fmt.Sprintf("no worker became ready within %s", p.cfg.QueueTimeout))
		case <-p.failed:
			return nil, sandbox.Errorf(sandbox.EWorkerCrashed, "Run the program again.", "the worker process did not start")
		case <-ctx.Done():
			return nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled)
		case <-p.ctx.Done():
			return nil, sandbox.Errorf(sandbox.ECancelled, "", "the server is shutting down")
		}
	}
	p.took(time.Now())
	w.principal = principal
	return w, nil
}

func (p *Pool) busy(msg string) *sandbox.Error {
	p.mu.Lock()
	last := p.lastErr
	p.mu.Unlock()
	if last != nil {
		msg += "; workers are failing to start"
	}
	return busy(msg)
}
