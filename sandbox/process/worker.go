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
}

// ServeWorker is the body of the hidden `worker` subcommand: it warms the
// engine, confines itself, says it is ready, reads one job from in, runs it
// with every tool call forwarded to the server as a frame on out, sends the
// outcome and returns. One job per worker: the process then exits, so no
// state survives between runs.
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
	if cfg.Warm != nil {
		cfg.Warm()
		// Workers may run with GOGC=off: return the warm-up's garbage now,
		// so an idle worker holds only what the job will use.
		runtime.GC()
		debug.FreeOSMemory()
	}
	if cfg.Restrict != nil {
		if err := cfg.Restrict(); err != nil {
			return fmt.Errorf("process: confinement: %w", err)
		}
	}
	fw := newFrameWriter(out)
	defer fw.close()
	h := &workerHost{fw: fw, pending: make(map[uint64]chan resultMsg)}
	if err := h.send(kindReady, readyMsg{PID: os.Getpid()}); err != nil {
		return err
	}
	br := bufio.NewReaderSize(in, 64<<10)
	kind, body, err := readFrame(br, MaxServerFrame)
	if err != nil {
		return err
	}
	if kind != kindJob {
		return fmt.Errorf("process: expected a job, got frame kind %#x", kind)
	}
	var job sandbox.Job
	if err := json.Unmarshal(body, &job); err != nil {
		return fmt.Errorf("process: bad job: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Results come back on in while the job runs; when the server goes away,
	// the job is cancelled (the parent-death signal is the backstop).
	go func() {
		defer cancel()
		h.readResults(br)
	}()
	if lim := min(cfg.MemoryBytes, job.Limits.MemoryBytes); lim > 0 {
		stop := watchMemory(lim, func(live uint64) {
			_ = h.sendSyncOutcome(&sandbox.Outcome{Err: sandbox.Errorf(sandbox.EMemory,
				"Use less memory: process data in smaller pieces.",
				fmt.Sprintf("the run exceeded its %d MiB memory limit", lim>>20))})
			os.Exit(3)
		})
		defer stop()
	}
	o := cfg.Executor.Execute(ctx, &job, h)
	if o == nil {
		o = &sandbox.Outcome{Err: sandbox.Errorf(sandbox.EInternal, "", "the engine returned no outcome")}
	}
	if err := h.send(kindOutcome, outcomeMsg{Value: o.Value, Logs: o.Logs, LogsTruncated: o.LogsTruncated, Partial: o.Partial, Err: o.Err}); err != nil {
		return err
	}
	return fw.close()
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
// reported by the last collection reaches 90% of limit. It returns a function that
// stops the watch.
func watchMemory(limit int64, over func(live uint64)) (stop func()) {
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
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

	mu      sync.Mutex // guards pending
	pending map[uint64]chan resultMsg

	pmu      sync.Mutex      // guards the fields below (Partial)
	partial  json.RawMessage // the latest value not yet sent
	flushing bool            // a flushPartials goroutine is running
}

var (
	_ sandbox.Host        = (*workerHost)(nil)
	_ sandbox.LogSink     = (*workerHost)(nil)
	_ sandbox.PartialSink = (*workerHost)(nil)
)

func (h *workerHost) send(kind byte, v any) error {
	body, err := marshalFrame(v)
	if err != nil {
		return err
	}
	return h.fw.send(kind, body)
}

// Call implements sandbox.Host.
func (h *workerHost) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	id := h.next.Add(1)
	ch := make(chan resultMsg, 1)
	h.mu.Lock()
	h.pending[id] = ch
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.pending, id)
		h.mu.Unlock()
	}()
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	frame, err := encodeCall(id, tool, args)
	if err == nil {
		err = h.fw.sendRaw(frame)
	}
	if err != nil {
		return nil, sandbox.Errorf(sandbox.EToolFailed, "", "the server is gone")
	}
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled)
	}
}

// Log implements sandbox.LogSink: entries stream to the server as they
// happen, so a worker that dies still leaves its logs.
func (h *workerHost) Log(entry string) {
	body, err := marshalFrame(logMsg{Entry: entry})
	if err == nil {
		_ = h.fw.sendSync(kindLog, body)
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
func (h *workerHost) Partial(value json.RawMessage) {
	h.pmu.Lock()
	defer h.pmu.Unlock()
	h.partial = value
	if !h.flushing {
		h.flushing = true
		go h.flushPartials()
	}
}

// partialInterval is the least time between two partial frames.
const partialInterval = 100 * time.Millisecond

// flushPartials sends the pending partial value until there is none.
func (h *workerHost) flushPartials() {
	for {
		h.pmu.Lock()
		v := h.partial
		h.partial = nil
		if v == nil {
			h.flushing = false
			h.pmu.Unlock()
			return
		}
		h.pmu.Unlock()
		if body, err := marshalFrame(partialMsg{Value: v}); err == nil {
			_ = h.fw.sendSync(kindPartial, body)
		}
		time.Sleep(partialInterval)
	}
}

// marshalFrame encodes the body of a worker → server frame without
// encoding/json's HTML escaping, which would write '<', '>' and '&' as six
// bytes each, also inside the engine's compact JSON: the server measures
// results, partial results and logs as the engine did, and an outcome with a
// result kept whole for paging plus its logs stays within MaxWorkerFrame.
func marshalFrame(v any) ([]byte, error) { return sandbox.MarshalJSON(v) }

func (h *workerHost) readResults(in io.Reader) {
	for {
		kind, body, err := readFrame(in, MaxServerFrame)
		if err != nil {
			return
		}
		if kind != kindResult {
			continue
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
		h.mu.Lock()
		ch := h.pending[r.ID]
		h.mu.Unlock()
		if ch != nil {
			select {
			case ch <- r:
			default:
			}
		}
	}
}
