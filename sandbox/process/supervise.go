package process

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

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

	body, err := encodeJob(job)
	if err == nil {
		err = w.fw.send(kindJob, body)
	}
	if err != nil {
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
