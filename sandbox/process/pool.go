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
	// Size is the number of warm workers kept ready. If zero, the number of
	// CPUs.
	Size int
	// MaxRunning is how many jobs run at once, all principals together. If
	// zero, 4 × Size.
	MaxRunning int
	// Queue is how many jobs may wait for a running slot when all are
	// taken; past it a job gets E_BUSY at once (unless its principal holds
	// less of the queue than another, see Pool). If zero, 128 or 16 × Size,
	// whichever is larger: a burst of 64 small runs waits instead of
	// failing. Negative means no queue.
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
type Pool struct {
	cfg   Config
	log   *slog.Logger
	ready chan *worker
	slots chan struct{} // one token per warm or starting worker
	sched *sched

	ctx     context.Context
	cancel  context.CancelFunc
	fillWG  sync.WaitGroup
	running atomic.Int32 // jobs running now
	// starting is the PID of the worker being started (0: none);
	// wanting counts jobs waiting for a fresh worker. A start is niced
	// only while no job waits for it.
	starting atomic.Int64
	wanting  atomic.Int32

	failed chan struct{} // closed when a NoRefill pool's worker did not start

	mu      sync.Mutex // guards live and lastErr
	live    map[*worker]struct{}
	lastErr error
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
		cfg.Size = runtime.NumCPU()
	}
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = 4 * cfg.Size
	}
	if cfg.Queue == 0 {
		cfg.Queue = max(128, 16*cfg.Size)
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
		cfg:    cfg,
		log:    cfg.Logger,
		ready:  make(chan *worker, cfg.Size),
		slots:  make(chan struct{}, cfg.Size),
		sched:  newSched(cfg.MaxRunning, cfg.Queue, cfg.MaxRunning),
		live:   make(map[*worker]struct{}),
		failed: make(chan struct{}),
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

// Size returns the number of warm workers the pool keeps.
func (p *Pool) Size() int { return p.cfg.Size }

// Close stops refilling and kills every worker, idle or busy. Jobs running
// on killed workers end with E_CANCELLED.
func (p *Pool) Close() error {
	p.cancel()
	p.fillWG.Wait()
	p.mu.Lock()
	ws := make([]*worker, 0, len(p.live))
	for w := range p.live {
		ws = append(ws, w)
	}
	p.mu.Unlock()
	for _, w := range ws {
		w.kill(endShutdown)
	}
	for _, w := range ws {
		w.release()
	}
	return nil
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
		// A job now waits for the worker being started: it must not
		// start at low priority behind the running jobs.
		p.wanting.Add(1)
		defer p.wanting.Add(-1)
		if pid := p.starting.Load(); pid > 0 {
			_ = syscall.Setpriority(syscall.PRIO_PGRP, int(pid), 0)
		}
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
	<-p.slots // the filler may start a replacement now
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
