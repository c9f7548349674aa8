package process

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// WorkerConfig configures the worker side of the pool.
type WorkerConfig struct {
	// Executor runs the job: an in-process engine. Required.
	Executor sandbox.Executor
	// Warm, if set, runs before confinement: load what the engine needs
	// (compile the prelude, touch lazily initialized state) so that the job
	// itself does not pay for it.
	Warm func()
	// Restrict, if set, applies the OS confinement to this process after
	// warming and before any untrusted input is read. If it fails the worker
	// exits without serving.
	Restrict func() error
	// MaxStackBytes caps each goroutine's stack in the worker. If zero, 64 MiB.
	MaxStackBytes int
	// MemoryBytes is the worker's memory ceiling; a job's own limit may be
	// lower. While the job runs, a watchdog ends it with E_MEMORY as soon as
	// the live heap measured by a collection reaches 90% of the limit: the
	// collector is then triggered by the limit itself and would spin,
	// freeing almost nothing, until the address-space or CPU limit killed
	// the process seconds later. If zero, no watchdog.
	MemoryBytes int64
	// Jobs is how many jobs the server will send this worker (its
	// Config.Reuse); zero means no bound. After its last job a worker does
	// not collect the job's garbage (the server is about to end it), so it
	// leaves the CPU to the server.
	Jobs int
	// KeepWarmGarbage skips the collection after Warm, and the release of
	// memory when idle (IdleRelease). A worker whose start is a job's
	// latency (one started for one program, as `sandcall run` does) sets
	// it: the collection costs milliseconds of CPU on that clock, and the
	// warm-up's garbage counts toward no limit (the memory watchdog reads
	// the live heap a collection measured).
	KeepWarmGarbage bool
	// IdleRelease is how long the worker waits for a job, once ready or
	// after a job, before it gives back what it holds and does not use
	// (ReleaseMemory: its free heap and the pages of its executable), so
	// that an idle worker holds little. If zero, 1 s; if negative, never.
	IdleRelease time.Duration
	// WarmIdle, if set, runs once, the first time the worker has waited
	// IdleRelease for a job (before it gives back memory): warm-up that
	// only some jobs need, which a worker taken as soon as it is ready
	// (under load) then never pays for.
	WarmIdle func()
}

// ServeWorker is the body of the hidden `worker` subcommand: it warms the
// engine, confines itself, says it is ready, then serves jobs read from in
// until in is closed: each job runs with every tool call forwarded to the
// server as a frame on out, and ends with its outcome. The server decides
// how many jobs one worker serves (Config.Reuse), all of them for one
// principal; each job gets a fresh engine state (a new goja runtime, a new
// WebAssembly instance) from the executor, and the worker collects the
// previous job's garbage before it reads the next one.
func ServeWorker(ctx context.Context, in io.Reader, out io.Writer, cfg WorkerConfig) error {
	if cfg.Executor == nil {
		return errors.New("process: WorkerConfig.Executor is required")
	}
	// A Go stack overflow must end the worker quickly and recognizably
	// (E_STACK), long before the default 1 GB stack eats the memory limit.
	maxStack := cfg.MaxStackBytes
	if maxStack <= 0 {
		maxStack = 64 << 20
	}
	debug.SetMaxStack(maxStack)
	if !cfg.KeepWarmGarbage {
		// First, while the heap is fresh: the jobs' heap in huge pages.
		n := int64(collectEvery)
		if cfg.MemoryBytes > 0 {
			n = min(n, cfg.MemoryBytes/2)
		}
		hugeHeap(int(n))
	}
	if cfg.Warm != nil {
		cfg.Warm()
		if !cfg.KeepWarmGarbage {
			// The warm-up's garbage goes; its pages stay resident and
			// free for the first job's allocations until the worker has
			// been idle for IdleRelease.
			runtime.GC()
		}
	}
	release := cfg.IdleRelease
	if release == 0 {
		release = time.Second
	}
	if cfg.KeepWarmGarbage {
		release = -1
	}
	if release > 0 {
		executableCode() // once, before confinement
	}
	if cfg.Restrict != nil {
		if err := cfg.Restrict(); err != nil {
			return fmt.Errorf("process: confinement: %w", err)
		}
	}
	fw := newFrameWriter(out)
	defer fw.close()
	h := &workerHost{fw: fw, pending: make(map[uint64]*pendingCall)}
	if err := h.send(kindReady, readyMsg{PID: os.Getpid()}); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// One reader for the worker's life: job frames go to jobs, tool
	// results to the calls waiting for them. When the server goes away,
	// the running job is cancelled (the parent-death signal is the
	// backstop).
	jobs := make(chan []byte, 1)
	readErr := make(chan error, 1)
	go func() {
		defer cancel()
		readErr <- h.readFrames(bufio.NewReaderSize(in, 64<<10), jobs, ctx.Done())
	}()
	var cleaned chan struct{} // closed when the last collection between jobs is done
	lastCollected := allocated()
	// idle fires when the worker has waited release for a job; it is
	// stopped while a job runs and rearmed after it.
	idle := time.NewTimer(time.Hour)
	idle.Stop()
	if release > 0 {
		idle.Reset(release)
	}
	defer idle.Stop()
	for n := 0; ; {
		var body []byte
		select {
		case body = <-jobs:
		case <-ctx.Done():
			err := <-readErr
			if n > 0 && errors.Is(err, io.EOF) {
				return fw.close() // the server is done with this worker
			}
			return err
		case <-idle.C:
			if cleaned != nil {
				<-cleaned
			}
			if cfg.WarmIdle != nil {
				cfg.WarmIdle()
				cfg.WarmIdle = nil
			}
			releaseIdle()
			lastCollected = allocated()
			continue
		}
		idle.Stop()
		n++
		job, err := decodeJob(body)
		if err != nil {
			return fmt.Errorf("process: bad job: %w", err)
		}
		if err := serveJob(ctx, job, h, cfg); err != nil {
			return err
		}
		if cfg.Jobs > 0 && n >= cfg.Jobs {
			continue // the last job: the server ends the worker now
		}
		if release > 0 {
			idle.Reset(release)
		}
		if allocated() < lastCollected+collectEvery {
			continue
		}
		if cleaned != nil {
			<-cleaned // one collection at a time
		}
		// The jobs' garbage goes now, in the background: the worker is
		// normally idle, and a next job that arrives meanwhile does not
		// wait for the collection. Freed pages stay resident for the next
		// jobs (no page faults on their first allocations) up to
		// idleHeapBytes; past that they go back to the system.
		lastCollected = allocated()
		c := make(chan struct{})
		cleaned = c
		go func() {
			defer close(c)
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapIdle-ms.HeapReleased > idleHeapBytes {
				debug.FreeOSMemory()
			}
		}()
	}
}

// releaseIdle is what an idle worker does: ReleaseMemory (tests watch it).
var releaseIdle = ReleaseMemory

// idleHeapBytes is how much freed heap a worker keeps resident between jobs:
// more than a collection after collectEvery frees.
const idleHeapBytes = 2 * collectEvery

// collectEvery is how much a reused worker allocates before it collects
// between two jobs. A forced collection has a fixed cost of 0.5-3.7 ms of
// CPU on a 2-core VM even for a live heap of 1-3 MB (stopping the world,
// waking every P, sweeping), and in the background it competes with the
// next job on the worker's one P: collecting after every job took a
// `return 1` run in a reused worker from 0.8-1.3 to 2.4-3.3 ms (median) and
// its worker CPU from 1.4-3.0 to 5.6-7.2 ms. With runs back to back, a
// collection after one run's outcome shares the P with the next run: at
// 64 MiB there are a quarter as many as at 16 MiB (expense process/
// in-process 1.33-1.40x -> 1.18-1.19x, fan-out 0.54-0.56x -> 0.59-0.60x,
// medians of 8 interleaved bench runs in two sittings; 32 MiB gave 1.27x
// and 0.57x). Collecting more often does not pay for the page faults it
// saves either: without the heap faulted in ahead, 16 and 8 MiB measured
// 1.28-1.34x and 1.33-1.59x against 1.05-1.19x at 64 MiB. The heap is not
// faulted in ahead (that cost every worker start 35-70 ms of CPU): the
// jobs' first 64 MiB are in huge pages (hugeHeap), and a worker idle for
// WorkerConfig.IdleRelease returns what it does not use. A job that
// allocates toward its memory limit is still collected during the job
// (GOGC=off: the limit triggers the collector) and watched (watchMemory).
const collectEvery = 64 << 20

// allocated returns the bytes allocated on the heap since the worker
// started.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// serveJob runs one job and sends its outcome. Nothing the job's goroutines
// send after the outcome leaves the worker (see jobHost).
func serveJob(ctx context.Context, job *sandbox.Job, h *workerHost, cfg WorkerConfig) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jh := &jobHost{h: h}
	if lim := min(cfg.MemoryBytes, job.Limits.MemoryBytes); lim > 0 {
		stop := watchMemory(lim, func(live uint64) {
			if !jh.end() {
				return // the outcome is sent already
			}
			_ = h.sendSyncOutcome(&sandbox.Outcome{Err: sandbox.Errorf(sandbox.EMemory,
				"Use less memory: process data in smaller pieces.",
				fmt.Sprintf("the run exceeded its %d MiB memory limit", lim>>20))})
			os.Exit(3)
		})
		defer stop()
	}
	relay := sandbox.NewWall(0, nil) // no limit: the engine's wall is linked to it
	h.setWall(relay)
	defer h.setWall(nil)
	o := cfg.Executor.Execute(sandbox.ContextWithWall(ctx, relay), job, jh)
	if o == nil {
		o = &sandbox.Outcome{Err: sandbox.Errorf(sandbox.EInternal, "", "the engine returned no outcome")}
	}
	if !jh.end() {
		select {} // the memory watchdog is sending its outcome and exiting
	}
	// Written before serveJob returns: with one P, a frame only queued
	// would wait for what the worker does next (Idle, a collection).
	return h.sendSyncOutcome(o)
}

// jobHost is the Host of one job in a worker: it forwards to the worker's
// host until the job ends, and drops what the job's stray goroutines send
// afterwards, so that the outcome is the job's last frame and nothing of
// one job reaches the server during the next.
type jobHost struct {
	h *workerHost

	mu    sync.Mutex // guards ended and the partial state
	ended bool
	// partial is the latest value not yet sent; flushing, whether a
	// flushPartials goroutine runs.
	partial  json.RawMessage
	flushing bool
}

var (
	_ sandbox.AsyncHost   = (*jobHost)(nil)
	_ sandbox.LogSink     = (*jobHost)(nil)
	_ sandbox.PartialSink = (*jobHost)(nil)
)

// end marks the job ended; it reports whether this call ended it.
func (j *jobHost) end() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ended {
		return false
	}
	j.ended = true
	return true
}

// Call implements sandbox.Host.
func (j *jobHost) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	j.mu.Lock()
	ended := j.ended
	j.mu.Unlock()
	if ended {
		return nil, sandbox.Errorf(sandbox.ECancelled, "", "the run has ended")
	}
	return j.h.Call(ctx, tool, args)
}

// StartCall implements sandbox.AsyncHost.
func (j *jobHost) StartCall(ctx context.Context, tool string, args json.RawMessage, done func(json.RawMessage, error)) {
	j.mu.Lock()
	ended := j.ended
	j.mu.Unlock()
	if ended {
		go done(nil, sandbox.Errorf(sandbox.ECancelled, "", "the run has ended"))
		return
	}
	j.h.StartCall(ctx, tool, args, done)
}

// Flush implements sandbox.AsyncHost.
func (j *jobHost) Flush() { j.h.Flush() }

// Log implements sandbox.LogSink: entries stream to the server as they
// happen, so a worker that dies still leaves its logs.
func (j *jobHost) Log(entry string) {
	body, err := marshalFrame(logMsg{Entry: entry})
	if err != nil {
		return
	}
	j.mu.Lock()
	if j.ended {
		j.mu.Unlock()
		return
	}
	// Queued under the lock, so that it precedes the outcome; written
	// before Log returns, so that it survives the process dying.
	f := qframe{b: encodeFrame(kindLog, body), flushed: make(chan struct{})}
	err = j.h.fw.enqueue(f)
	j.mu.Unlock()
	if err == nil {
		<-f.flushed
	}
}

// Partial implements sandbox.PartialSink: the values stored with
// progress(value) stream to the server, so a worker killed at its deadline
// still leaves the last one. The stream is coalesced: a value is sent at
// once when none was sent within partialInterval, else the latest one is
// sent when the interval ends, and the values stored in between are
// skipped (the outcome carries the engine's last one). A program storing a
// 256 KiB value in a loop would otherwise keep the server busy decoding
// them, a core for a core.
func (j *jobHost) Partial(value json.RawMessage) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ended {
		return
	}
	j.partial = value
	if !j.flushing {
		j.flushing = true
		go j.flushPartials()
	}
}

// flushPartials sends the pending partial value until there is none.
func (j *jobHost) flushPartials() {
	for {
		j.mu.Lock()
		v := j.partial
		j.partial = nil
		if v == nil || j.ended {
			j.flushing = false
			j.mu.Unlock()
			return
		}
		body, err := marshalFrame(partialMsg{Value: v})
		var f qframe
		if err == nil {
			f = qframe{b: encodeFrame(kindPartial, body), flushed: make(chan struct{})}
			err = j.h.fw.enqueue(f)
		}
		j.mu.Unlock()
		if err == nil {
			<-f.flushed
		}
		time.Sleep(partialInterval)
	}
}

// sendSyncOutcome sends the outcome and waits until it is written.
func (h *workerHost) sendSyncOutcome(o *sandbox.Outcome) error {
	body, err := marshalFrame(outcomeMsg{Value: o.Value, Logs: o.Logs, LogsTruncated: o.LogsTruncated, Partial: o.Partial, Err: o.Err})
	if err != nil {
		return err
	}
	return h.fw.sendSync(kindOutcome, body)
}

// watchMemory calls over once, from its own goroutine, when the live heap
// reported by a collection reaches 90% of limit. Only collections that
// ended after the watch began count: an earlier one measured an earlier
// job. It returns a function that stops the watch.
func watchMemory(limit int64, over func(live uint64)) (stop func()) {
	done := make(chan struct{})
	cycles := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(cycles)
	start := cycles[0].Value.Uint64()
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[1].Value.Uint64() > start {
				if live := sample[0].Value.Uint64(); live >= uint64(limit)/10*9 {
					over(live)
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// workerHost forwards the guest's tool calls and logs to the server.
type workerHost struct {
	fw *frameWriter

	next atomic.Uint64

	mu      sync.Mutex // guards pending, wall and release
	pending map[uint64]*pendingCall
	// batch holds the frames of calls started and not yet flushed, and
	// batchIDs their ids.
	bmu      sync.Mutex
	batch    []byte
	batchIDs []uint64
	// wall relays the server's holds to the running job's engine (nil
	// between jobs); release ends the hold in force, if any.
	wall    *sandbox.Wall
	release func()
}

// setWall makes w the wall that the server's holds reach (nil: none).
func (h *workerHost) setWall(w *sandbox.Wall) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release != nil {
		h.release()
		h.release = nil
	}
	h.wall = w
}

// hold holds or releases the running job's wall, as the server says.
func (h *workerHost) hold(held bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.wall == nil:
	case held && h.release == nil:
		h.release = h.wall.Hold()
	case !held && h.release != nil:
		h.release()
		h.release = nil
	}
}

var _ sandbox.AsyncHost = (*workerHost)(nil)

func (h *workerHost) send(kind byte, v any) error {
	body, err := marshalFrame(v)
	if err != nil {
		return err
	}
	return h.fw.send(kind, body)
}

// Call implements sandbox.Host.
func (h *workerHost) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	type answer struct {
		res json.RawMessage
		err error
	}
	ch := make(chan answer, 1)
	h.StartCall(ctx, tool, args, func(res json.RawMessage, err error) { ch <- answer{res, err} })
	h.Flush()
	a := <-ch
	return a.res, a.err
}

// pendingCall is a call sent to the server and not yet answered.
type pendingCall struct {
	done func(json.RawMessage, error)
	stop func() bool // stops the cancellation's AfterFunc
}

// StartCall implements sandbox.AsyncHost: the frame reader calls done with
// the server's answer; a cancellation of ctx calls it first if it comes
// first (the server's late answer is then dropped).
func (h *workerHost) StartCall(ctx context.Context, tool string, args json.RawMessage, done func(json.RawMessage, error)) {
	id := h.next.Add(1)
	pc := &pendingCall{done: done}
	h.mu.Lock()
	h.pending[id] = pc
	pc.stop = context.AfterFunc(ctx, func() {
		if h.take(id) != nil {
			done(nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled))
		}
	})
	h.mu.Unlock()
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	frame, err := encodeCall(id, tool, args)
	if err != nil { // only a name longer than 64 KiB
		h.fail(id, sandbox.Errorf(sandbox.EToolUnknown, "", "no tool has a name that long"))
		return
	}
	h.bmu.Lock()
	h.batch = append(h.batch, frame...)
	h.batchIDs = append(h.batchIDs, id)
	h.bmu.Unlock()
}

// Flush implements sandbox.AsyncHost: the calls started since the last
// Flush go to the server in one write; if the server is gone, they fail
// at once.
func (h *workerHost) Flush() {
	h.bmu.Lock()
	b, ids := h.batch, h.batchIDs
	h.batch, h.batchIDs = nil, nil
	h.bmu.Unlock()
	if len(b) == 0 {
		return
	}
	if err := h.fw.sendRaw(b); err != nil {
		for _, id := range ids {
			h.fail(id, sandbox.Errorf(sandbox.EToolFailed, "", "the server is gone"))
		}
	}
}

// fail answers the pending call id with err, unless it was answered, from
// a goroutine of its own: its caller may be the engine's, which done
// would wait for.
func (h *workerHost) fail(id uint64, err *sandbox.Error) {
	if pc := h.take(id); pc != nil {
		pc.stop()
		go pc.done(nil, err)
	}
}

// take removes and returns the pending call id, or nil if it was answered
// or cancelled already: whoever takes it calls its done.
func (h *workerHost) take(id uint64) *pendingCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	pc := h.pending[id]
	delete(h.pending, id)
	return pc
}

// partialInterval is the least time between two partial frames.
const partialInterval = 100 * time.Millisecond

// marshalFrame encodes the body of a worker → server frame without
// encoding/json's HTML escaping, which would write '<', '>' and '&' as six
// bytes each, also inside the engine's compact JSON: the server measures
// results, partial results and logs as the engine did, and an outcome with a
// result kept whole for paging plus its logs stays within MaxWorkerFrame.
func marshalFrame(v any) ([]byte, error) { return sandbox.MarshalJSON(v) }

// readFrames reads the server's frames until in fails: jobs go to jobs (one
// at a time; the server sends the next job only after the outcome), results
// to the calls waiting for them. Results for calls no longer waiting (of a
// job that has ended) are dropped.
func (h *workerHost) readFrames(in io.Reader, jobs chan<- []byte, done <-chan struct{}) error {
	for {
		kind, body, err := readFrame(in, MaxServerFrame)
		if err != nil {
			return err
		}
		switch kind {
		case kindJob:
			select {
			case jobs <- body:
			case <-done:
				return io.EOF
			}
			continue
		case kindHold:
			var m holdMsg
			if strictUnmarshal(body, &m) == nil {
				h.hold(m.Held)
			}
			continue
		case kindResult:
		default:
			return fmt.Errorf("process: unexpected frame kind %#x", kind)
		}
		id, isErr, payload, err := decodeResult(body)
		if err != nil {
			continue
		}
		r := resultMsg{ID: id, Result: payload}
		if isErr {
			r = resultMsg{ID: id, Err: &sandbox.Error{}}
			if json.Unmarshal(payload, r.Err) != nil || !r.Err.Code.Valid() {
				r.Err = sandbox.Errorf(sandbox.EInternal, "", "malformed error from the server")
			}
		}
		if pc := h.take(r.ID); pc != nil {
			pc.stop()
			if r.Err != nil {
				pc.done(nil, r.Err)
			} else {
				pc.done(r.Result, nil)
			}
		}
	}
}
