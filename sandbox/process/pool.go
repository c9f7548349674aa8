package process

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
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

	ctx    context.Context
	cancel context.CancelFunc
	fillWG sync.WaitGroup
	// afterFunc is context.AfterFunc (a test delays what it runs: the
	// kill a job's cancellation sets off runs on a goroutine of its own).
	afterFunc func(context.Context, func()) func() bool
	running   atomic.Int32 // jobs running now
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
		afterFunc: context.AfterFunc,
		cfg:       cfg,
		log:       cfg.Logger,
		ready:     make(chan *worker, cfg.Size),
		slots:     make(chan struct{}, cfg.Size),
		sched:     newSched(cfg.MaxRunning, cfg.Queue, cfg.MaxRunning),
		live:      make(map[*worker]struct{}),
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

// expireIdle discards the workers kept idle for longer than idleTTL.
func (p *Pool) expireIdle() {
	defer p.fillWG.Done()
	t := time.NewTicker(idleTTL / 4)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case now := <-t.C:
			for _, w := range p.sched.expire(now.Add(-idleTTL)) {
				w.discard()
			}
		}
	}
}

// fill keeps Size workers warm or starting.
func (p *Pool) fill() {
	defer p.fillWG.Done()
	backoff := 10 * time.Millisecond
	started := 0
	for {
		select {
		case p.slots <- struct{}{}:
		case <-p.ctx.Done():
			return
		}
		w, err := p.start()
		if err != nil {
			<-p.slots
			p.mu.Lock()
			p.lastErr = err
			p.mu.Unlock()
			p.log.Error("worker did not start", "err", err)
			if p.cfg.NoRefill {
				close(p.failed)
				return
			}
			select {
			case <-time.After(backoff):
			case <-p.ctx.Done():
				return
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 10 * time.Millisecond
		p.mu.Lock()
		p.lastErr = nil
		p.mu.Unlock()
		select {
		case p.ready <- w:
		case <-p.ctx.Done():
			w.kill(endShutdown)
			w.release()
			return
		}
		if started++; p.cfg.NoRefill && started >= p.cfg.Size {
			return
		}
	}
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

// start launches one worker and waits until it reports ready.
func (p *Pool) start() (*worker, error) {
	jobR, jobW, err := os.Pipe() // server → worker
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe() // worker → server
	if err != nil {
		jobR.Close()
		jobW.Close()
		return nil, err
	}
	cmd := exec.Command(p.cfg.Command[0], p.cfg.Command[1:]...)
	// GOMAXPROCS set explicitly, and the GODEBUG settings, keep the runtime
	// from opening cgroup files to track CPU quotas: a worker holds no open
	// files but its pipes. One P: a job is one guest goroutine (goja and
	// wazero run single-threaded), and with a second P every result the
	// frame reader hands to the engine woke another thread; with one the
	// hand-off stays on the thread (worker CPU per 1,000-call fan-out
	// 30.4-34.8 ms against 36.9-40.4 ms, per expense run 12.9-14.3 against
	// 13.6-17.6 ms, interleaved runs). Go's preemption still gives the
	// reader, the memory watchdog and the deadline's interrupt their turn
	// within its 10 ms time slice while a guest loops.
	cmd.Env = append(append([]string(nil), p.cfg.Env...),
		"GOMEMLIMIT="+strconv.FormatInt(p.cfg.MemoryBytes, 10),
		"GOMAXPROCS=1",
		"GODEBUG=containermaxprocs=0,updatemaxprocs=0")
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{jobR, outW} // fd 3: frames in, fd 4: frames out
	stderr := &capBuffer{max: 16 << 10}
	cmd.Stderr = stderr
	attr := &syscall.SysProcAttr{}
	if p.cfg.SysProcAttr != nil {
		*attr = *p.cfg.SysProcAttr
	}
	attr.Setpgid = true
	attr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr = attr
	err = startCmd(cmd)
	jobR.Close()
	outW.Close()
	if err != nil {
		jobW.Close()
		outR.Close()
		return nil, err
	}
	w := &worker{pool: p, cmd: cmd, in: outR, out: jobW, br: bufio.NewReaderSize(outR, 64<<10),
		fw: newFrameWriter(jobW), stderr: stderr, exited: make(chan struct{})}
	p.mu.Lock()
	p.live[w] = struct{}{}
	p.mu.Unlock()
	go w.reap()
	// A replacement usually starts while the job that took its predecessor
	// runs: on a small machine its start-up (exec, confinement, engine
	// warm-up) would compete with that job for the CPU. While jobs run, a
	// new worker starts at low priority and gets normal priority once it is
	// ready, or as soon as a job waits for it. (PRIO_PGRP reaches every
	// thread of the worker, which leads its own process group.)
	p.starting.Store(int64(cmd.Process.Pid))
	defer p.starting.Store(0)
	niced := p.running.Load() > 0 && p.wanting.Load() == 0
	if niced {
		_ = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, startNice)
		// A job that began waiting meanwhile may have missed the nice.
		if p.wanting.Load() > 0 {
			_ = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, 0)
		}
	}
	if p.cfg.OnStart != nil {
		if err := p.cfg.OnStart(cmd.Process.Pid); err != nil {
			w.kill(endShutdown)
			w.release()
			return nil, err
		}
	}
	type ready struct {
		kind byte
		body []byte
		err  error
	}
	rc := make(chan ready, 1)
	go func() {
		k, b, err := readFrame(w.br, MaxWorkerFrame)
		rc <- ready{k, b, err}
	}()
	t := time.NewTimer(p.cfg.StartTimeout)
	defer t.Stop()
	select {
	case r := <-rc:
		if r.err == nil && r.kind == kindReady {
			if niced {
				_ = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, 0)
			}
			return w, nil
		}
		w.kill(endShutdown)
		w.release()
		return nil, fmt.Errorf("worker did not report ready: %v (stderr: %s)", r.err, bytes.TrimSpace(stderr.Bytes()))
	case <-t.C:
		w.kill(endShutdown)
		w.release()
		return nil, fmt.Errorf("worker did not report ready within %s", p.cfg.StartTimeout)
	}
}

// startNice is the scheduling priority of a worker until it is ready.
const startNice = 10

// Why a worker was killed by the supervisor.
type endReason int

const (
	endNone endReason = iota
	endDeadline
	endCancel
	endProtocol
	endShutdown
	endDone
	endCPU
)

type worker struct {
	pool   *Pool
	cmd    *exec.Cmd
	in     *os.File      // frames from the worker
	out    *os.File      // frames to the worker
	br     *bufio.Reader // buffers in
	fw     *frameWriter  // writes out
	stderr *capBuffer
	exited chan struct{}

	// principal is whom the worker serves, set with its first job; jobs
	// counts the jobs it was given. Both belong to the job's goroutine.
	principal string
	jobs      int
	idleSince time.Time // guarded by the pool's sched.mu while idle
	// cpuMark is the worker's CPU time when its previous job ended, if
	// cpuMarked; it belongs to the job's goroutine.
	cpuMark   time.Duration
	cpuMarked bool

	mu     sync.Mutex // guards reason
	reason endReason
}

func (w *worker) reap() {
	_ = w.cmd.Wait()
	w.pool.mu.Lock()
	delete(w.pool.live, w)
	w.pool.mu.Unlock()
	if w.pool.cfg.OnExit != nil {
		w.pool.cfg.OnExit(w.cmd.Process.Pid)
	}
	close(w.exited)
}

// release waits for the worker to be reaped and closes the server's ends of
// its pipes. The read end stays open until then, so that frames the worker
// wrote just before it exited are still read.
func (w *worker) release() {
	<-w.exited
	w.out.Close()
	_ = w.fw.close()
	w.in.Close()
}

// kill sends SIGKILL to the worker's process group, recording why (the first
// reason wins).
func (w *worker) kill(r endReason) {
	w.mu.Lock()
	if w.reason == endNone {
		w.reason = r
	}
	w.mu.Unlock()
	pid := w.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = w.cmd.Process.Kill()
}

func (w *worker) send(kind byte, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.fw.send(kind, body)
}

// discard kills w and reaps it in the background (Close waits for it), so
// that the client does not wait for the teardown.
func (w *worker) discard() {
	w.kill(endDone)
	go w.release()
}

// endStat reads, when a job has ended normally, the worker's resident
// memory (returned; MaxInt64 if unknown) and its CPU time (kept as the next
// job's starting point, so that a job costs one read of /proc, not two).
func (w *worker) endStat() int64 {
	cpu, rss := w.stat()
	w.cpuMark, w.cpuMarked = cpu, cpu >= 0
	return rss
}

// stat returns the CPU time the worker has used (every thread, user and
// system), or -1 if unknown, and its resident memory, or MaxInt64 if
// unknown, from one read of /proc/PID/stat.
func (w *worker) stat() (cpu time.Duration, rss int64) {
	cpu, rss = -1, math.MaxInt64
	var buf [1024]byte
	b, err := readProc("/proc/"+strconv.Itoa(w.cmd.Process.Pid)+"/stat", buf[:])
	if err != nil {
		return cpu, rss
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after its closing one (f[0] is field 3, state).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return cpu, rss
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 {
		return cpu, rss
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 == nil && err2 == nil {
		cpu = time.Duration(ut+st) * time.Second / clockTicks
	}
	if pages, err := strconv.ParseInt(f[21], 10, 64); err == nil && pages >= 0 {
		rss = pages * int64(os.Getpagesize())
	}
	return cpu, rss
}

// readProc reads a small /proc file into buf with three system calls:
// os.ReadFile also tries to register the file with the poller and puts it
// back, eight system calls in all, twice per job.
func readProc(path string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return buf[:n], nil
		}
		n += m
	}
	return nil, errors.New("proc file larger than expected")
}

// cpuTime returns the CPU time the worker has used, or -1 if unknown.
func (w *worker) cpuTime() time.Duration {
	cpu, _ := w.stat()
	return cpu
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// cpuCheck is how often the supervisor samples a running job's CPU time.
const cpuCheck = 100 * time.Millisecond

// run executes one job on w. It reports whether w ended the job normally
// (an outcome, no kill, no protocol fault) and may serve another; if not, w
// is dead or being killed.
func (w *worker) run(ctx context.Context, job *sandbox.Job, host sandbox.Host, grace time.Duration) (_ *sandbox.Outcome, reusable bool) {
	w.jobs++
	callCtx, cancelCalls := context.WithCancel(ctx)
	var calls sync.WaitGroup
	ans := newAnswers(w.fw)
	defer func() {
		// Every call of this job is answered (or cancelled and answered)
		// before the worker can get another job.
		ans.end()
		cancelCalls()
		calls.Wait()
	}()

	limit := job.Limits.Resolve()
	resultCap := job.ResultCap()
	var logs []string
	logBytes := 0
	logsTruncated := false
	var partial json.RawMessage
	sink, _ := host.(sandbox.LogSink)
	psink, _ := host.(sandbox.PartialSink)
	async, _ := host.(sandbox.AsyncHost)

	if err := w.send(kindJob, job); err != nil {
		w.kill(endProtocol)
		return &sandbox.Outcome{Err: sandbox.Errorf(sandbox.EWorkerCrashed, "Run the program again.", "the worker died before it received the job")}, false
	}
	// The job's wall clock stops while a call waits for a person
	// (sandbox.HoldWall in the broker); the worker's engine is told, so
	// that its own deadline moves too.
	deadline := sandbox.NewWall(limit.Timeout+grace, func() { w.kill(endDeadline) })
	defer deadline.Stop()
	deadline.OnHold(func(held bool) { _ = w.send(kindHold, holdMsg{Held: held}) })
	callCtx = sandbox.ContextWithWall(callCtx, deadline)
	stop := w.pool.afterFunc(ctx, func() { w.kill(endCancel) })
	defer stop()
	// The CPU limit is the supervisor's, per job: a worker's own RLIMIT_CPU
	// spans all the jobs it serves and is only the backstop. A reused
	// worker's count starts where the previous job's ended (read then, see
	// endStat): its collection between the jobs, a few milliseconds, counts
	// toward this job.
	cpu0 := w.cpuMark
	if !w.cpuMarked {
		cpu0 = w.cpuTime()
	}
	if cpu0 >= 0 {
		cpuLimit := limit.Timeout + time.Second
		tick := time.NewTicker(cpuCheck)
		tickDone := make(chan struct{})
		defer func() { tick.Stop(); close(tickDone) }()
		go func() {
			for {
				select {
				case <-tickDone:
					return
				case <-tick.C:
				}
				if c := w.cpuTime(); c >= 0 && c-cpu0 > cpuLimit {
					w.kill(endCPU)
					return
				}
			}
		}()
	}

read:
	for {
		kind, body, err := readFrame(w.br, MaxWorkerFrame)
		if err != nil {
			// Only a frame the worker could not have meant is a protocol
			// violation. A worker that dies mid-frame (out of memory while
			// writing a log, say) leaves a truncated one: that is a death,
			// classified below like any other.
			if errors.Is(err, errFrameTooLarge) || errors.Is(err, errFrameEmpty) {
				w.kill(endProtocol)
			}
			break
		}
		msg, err := decodeWorkerMessage(kind, body)
		if err != nil {
			w.pool.log.Warn("worker sent a malformed frame; killing it", "err", err)
			w.kill(endProtocol)
			break
		}
		switch m := msg.(type) {
		case callMsg:
			calls.Add(1)
			more := w.br.Buffered() >= headerSize
			ans.started(more)
			answer := func(res json.RawMessage, err error) {
				defer calls.Done()
				if err != nil {
					res, _ = json.Marshal(sandbox.AsError(err, sandbox.EToolFailed))
				}
				ans.answer(m.ID, err != nil, res)
			}
			if async != nil {
				// No goroutine of ours per call: the host answers on its own.
				async.StartCall(callCtx, m.Tool, m.Args, answer)
				if !more {
					async.Flush()
				}
			} else {
				go func() { answer(host.Call(callCtx, m.Tool, m.Args)) }()
			}
		case logMsg:
			// An empty entry costs a byte, as in the engines.
			if cost := max(len(m.Entry), 1); logBytes+cost > limit.MaxLogBytes {
				logsTruncated = true
				continue
			}
			logBytes += max(len(m.Entry), 1)
			logs = append(logs, m.Entry)
			if sink != nil {
				sink.Log(m.Entry)
			}
		case partialMsg:
			// The worker's engine bounds it; a worker that does not is
			// not trusted further.
			if len(m.Value) > limit.MaxResultBytes {
				w.pool.log.Warn("worker sent a partial result over its budget; killing it", "bytes", len(m.Value))
				w.kill(endProtocol)
				break read
			}
			partial = m.Value
			if psink != nil {
				psink.Partial(m.Value)
			}
		case outcomeMsg:
			o := &sandbox.Outcome{Value: m.Value, Logs: m.Logs, LogsTruncated: m.LogsTruncated || logsTruncated, Partial: m.Partial, Err: m.Err}
			if o.Logs == nil {
				o.Logs = logs
			}
			if o.Partial == nil || len(o.Partial) > limit.MaxResultBytes {
				o.Partial = partial
			}
			if o.Err == nil && len(o.Value) > resultCap {
				o.Value = nil
				o.Err = sandbox.Errorf(sandbox.EOutputLimit, "Return less: aggregate or summarize inside the program.",
					fmt.Sprintf("the result is over the %d-byte limit", resultCap))
			}
			return o, w.endedNormally(o.Err)
		default:
			w.kill(endProtocol)
		}
	}
	// The worker ended without an outcome: what it streamed is what is
	// known.
	<-w.exited
	return &sandbox.Outcome{Logs: logs, LogsTruncated: logsTruncated, Partial: partial, Err: w.classify(limit)}, false
}

// endedNormally reports whether a job that sent its outcome with err left
// its worker fit for another job: not killed, and not ended by a limit, a
// cancellation or an internal fault that may have left state behind.
func (w *worker) endedNormally(err *sandbox.Error) bool {
	w.mu.Lock()
	killed := w.reason != endNone
	w.mu.Unlock()
	if killed {
		return false
	}
	if err != nil {
		switch err.Code {
		case sandbox.ETimeout, sandbox.EMemory, sandbox.EStack, sandbox.ECancelled,
			sandbox.EWorkerCrashed, sandbox.EInternal, sandbox.EUnsettled, sandbox.EModuleLimit:
			return false
		}
	}
	select {
	case <-w.exited:
		return false
	default:
		return true
	}
}

// classify names how a worker that sent no outcome ended.
func (w *worker) classify(limit sandbox.Limits) *sandbox.Error {
	w.mu.Lock()
	reason := w.reason
	w.mu.Unlock()
	switch reason {
	case endDeadline:
		return sandbox.Errorf(sandbox.ETimeout, "Make the program do less work, or raise timeout_ms up to the server's maximum.",
			fmt.Sprintf("the run exceeded its %s time limit", limit.Timeout))
	case endCancel:
		return sandbox.Errorf(sandbox.ECancelled, "", "the run was cancelled")
	case endCPU:
		return sandbox.Errorf(sandbox.ETimeout, "Make the program do less work.",
			fmt.Sprintf("the run used more than its CPU time limit (%s of CPU)", limit.Timeout+time.Second))
	case endShutdown:
		return sandbox.Errorf(sandbox.ECancelled, "", "the server is shutting down")
	case endProtocol:
		return sandbox.Errorf(sandbox.EWorkerCrashed, "Run the program again.", "the worker sent a malformed message and was stopped")
	}
	errText := w.stderr.String()
	w.pool.log.Debug("worker ended without an outcome", "state", w.cmd.ProcessState.String(), "stderr", sandbox.Cap(errText, 2048))
	switch {
	case containsAny(errText, "out of memory", "cannot allocate memory", "failed to allocate", "address space collisions"):
		return sandbox.Errorf(sandbox.EMemory, "Use less memory: process data in smaller pieces.",
			fmt.Sprintf("the run exceeded its %d MiB memory limit", limit.MemoryBytes>>20))
	case containsAny(errText, "stack overflow", "goroutine stack exceeds"):
		return sandbox.Errorf(sandbox.EStack, "Avoid deep recursion.", "the run exceeded its stack limit")
	}
	if ws, ok := w.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		// Not killed by us: SIGXCPU or SIGKILL from RLIMIT_CPU, which
		// counts the CPU time of every thread.
		cpu := w.cmd.ProcessState.UserTime() + w.cmd.ProcessState.SystemTime()
		if ws.Signal() == syscall.SIGXCPU || (ws.Signal() == syscall.SIGKILL && cpu >= limit.Timeout) {
			return sandbox.Errorf(sandbox.ETimeout, "Make the program do less work.",
				fmt.Sprintf("the run used more than its CPU time limit (%s of CPU)", cpu.Round(time.Millisecond)))
		}
	}
	w.pool.log.Warn("worker crashed", "state", w.cmd.ProcessState.String(), "stderr", sandbox.Cap(errText, 2048))
	return sandbox.Errorf(sandbox.EWorkerCrashed, "Run the program again; if it keeps failing, simplify it.",
		"the worker process running the program died unexpectedly")
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// capBuffer keeps the first max bytes written to it and discards the rest, so
// that a worker flooding its stderr costs the server nothing.
type capBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
		} else {
			c.buf.Write(p)
		}
	}
	return len(p), nil
}

func (c *capBuffer) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

func (c *capBuffer) String() string { return string(c.Bytes()) }

// closeOnExecInherited marks every descriptor above stderr close-on-exec.
// Go opens its own files close-on-exec, but a descriptor inherited from the
// server's parent without the flag would otherwise pass on to every worker.
func closeOnExecInherited() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
