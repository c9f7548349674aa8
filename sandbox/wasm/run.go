package wasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/sandcall/sandcall/sandbox"
)

// Fixed bounds of the ABI (see bindings/abi.md).
const (
	// MaxHandles bounds the handles issued and not yet freed by result_read.
	MaxHandles = 1000
	// maxArgsBytes and maxArgsDepth bound one call's arguments.
	maxArgsBytes = 1 << 20
	maxArgsDepth = 64
	// maxNameBytes bounds a tool name.
	maxNameBytes = 256
	// maxLogDropped is how much output past the log budget a program may
	// attempt before the run stops with E_OUTPUT_LIMIT.
	maxLogDropped = 1 << 20
)

// handle is one tool call. done is closed when status and payload are set.
type handle struct {
	done    chan struct{}
	status  int32 // 0 ok, 1 tool error
	payload []byte
}

// run is the state of one Execute. Fields without a comment about locking
// belong to the guest goroutine (the one running Execute: wazero calls host
// functions on it).
type run struct {
	ctx    context.Context // the run's deadline and the client's cancellation
	limits sandbox.Limits
	host   sandbox.Host
	sink   sandbox.LogSink
	input  []byte

	// guestCtx is what wazero runs under: cancelled by stop as well.
	guestCtx    context.Context
	guestCancel context.CancelFunc

	stopMu  sync.Mutex
	stopErr *sandbox.Error

	callCtx    context.Context
	callCancel context.CancelFunc
	calls      sync.WaitGroup
	handles    map[int32]*handle
	nextHandle int32
	started    int

	resultCap  int // the largest result kept (sandbox.Job.ResultCap)
	result     []byte
	resultSet  bool
	resultOver int // length of a set_result over the budget, else 0
	returned   []byte
	stdout     lineWriter
	stderr     lineWriter
	logs       []string
	logBytes   int
	logsTrunc  bool
	logDropped int
	runErr     *sandbox.Error
	// partial is the last value stored with progress (guest goroutine).
	partial json.RawMessage
	psink   sandbox.PartialSink
	// seed and clock are the job's (sandbox.Job.Seed, Clock): WASI's
	// random and clocks come from them (moduleConfig).
	seed  uint64
	clock time.Time
	// unwind: the compiled code is not interrupted (Config.NoInterrupt),
	// so host calls end the guest once the run is ending.
	unwind bool
}

func newRun(ctx context.Context, limits sandbox.Limits, host sandbox.Host, input []byte) *run {
	r := &run{ctx: ctx, limits: limits, host: host, input: input, handles: map[int32]*handle{}}
	r.sink, _ = host.(sandbox.LogSink)
	r.psink, _ = host.(sandbox.PartialSink)
	r.resultCap = limits.MaxResultBytes
	r.guestCtx, r.guestCancel = context.WithCancel(ctx)
	r.callCtx, r.callCancel = context.WithCancel(ctx)
	r.stdout = lineWriter{r: r}
	r.stderr = lineWriter{r: r, prefix: "[error] "}
	return r
}

type runKey struct{}

func runOf(ctx context.Context) *run { return ctx.Value(runKey{}).(*run) }

// stop ends the run with err (the first reason wins): wazero closes the
// module at its next check.
func (r *run) stop(err *sandbox.Error) {
	r.stopMu.Lock()
	if r.stopErr == nil {
		r.stopErr = err
	}
	r.stopMu.Unlock()
	r.guestCancel()
	r.callCancel()
}

func (r *run) stopped() *sandbox.Error {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	return r.stopErr
}

// ending reports whether host functions must refuse (ABI error -5).
func (r *run) ending() bool { return r.guestCtx.Err() != nil }

// errUnwind is what a host function panics with to end a guest that
// nothing else interrupts (Config.NoInterrupt): wazero recovers it and the
// entry point's call returns; execute then reports the run's end as it
// would have been reported (mapErr: the stop's reason, the deadline or the
// cancellation).
var errUnwind = errors.New("wasm: the run has ended")

// unwindIfEnding ends the guest from the host function (or WASI write) it
// called, if nothing else will (unwind) and the run is ending.
func (r *run) unwindIfEnding() {
	if r.unwind && r.ending() {
		panic(errUnwind)
	}
}

// ctxError maps the end of ctx to E_TIMEOUT or E_CANCELLED.
func ctxError(ctx context.Context, limit interface{ String() string }) *sandbox.Error {
	if errors.Is(ctx.Err(), context.Canceled) || errors.Is(context.Cause(ctx), context.Canceled) {
		return sandbox.Errorf(sandbox.ECancelled, "", "the run was cancelled")
	}
	msg := "the run exceeded its time limit"
	if limit != nil {
		msg += " of " + limit.String()
	}
	return sandbox.Errorf(sandbox.ETimeout,
		"Make the program do less work (fewer loop iterations, fewer or smaller tool calls), or raise timeout_ms up to the server's maximum.", msg)
}

// execute instantiates the module and calls its entry point.
func (r *run) execute(l *lease) {
	defer r.close()
	ctx := context.WithValue(r.guestCtx, runKey{}, r)
	mod, err := l.c.rt.r.InstantiateModule(ctx, l.c.cm, r.moduleConfig())
	if err != nil {
		r.runErr = r.mapErr(err, true)
		return
	}
	defer mod.Close(context.Background())
	fn := mod.ExportedFunction(l.c.entry)
	res, err := fn.Call(ctx)
	if err != nil {
		r.runErr = r.mapErr(err, false)
		return
	}
	// A guest that returns after an ABI call told it the run ended (-5)
	// still ends with the reason.
	if r.runErr = r.stopped(); r.runErr != nil {
		return
	}
	if r.ctx.Err() != nil {
		r.runErr = ctxError(r.ctx, r.limits.Timeout)
		return
	}
	if l.c.entry == "run" && len(res) == 1 {
		r.returned = numberJSON(fn.Definition().ResultTypes()[0], res[0])
	}
}

// moduleConfig is the WASI configuration of a run: nothing but args
// ["program"] and stdout/stderr captured into the logs; wazero's defaults
// for the rest (no filesystem, no environment, empty stdin, fake clocks,
// deterministic random).
//
// A run the host made replayable (sandbox.Job.Seed and Clock, set when a
// call may wait for a person's approval on MCP 2026-07-28) gets WASI's
// random_get from a ChaCha8 generator seeded with Seed, clock_time_get's
// realtime clock frozen at Clock (as JavaScript's Date), and a monotonic
// clock that starts at zero and advances 1 ms per reading: two runs of one
// job with the same Seed and Clock read the same values in the same order,
// so a run resumed by replay takes the same path. clock_res_get reports 1
// ns for both.
func (r *run) moduleConfig() wazero.ModuleConfig {
	c := wazero.NewModuleConfig().
		WithName("").
		WithArgs("program").
		WithStdout(&r.stdout).
		WithStderr(&r.stderr).
		WithStartFunctions() // the entry point is called by execute, not at instantiation
	if r.seed != 0 {
		var key [32]byte
		binary.LittleEndian.PutUint64(key[:], r.seed)
		copy(key[8:], "sandcall wasi random_get")
		c = c.WithRandSource(rand.NewChaCha8(key))
	}
	if wall := r.clock; !wall.IsZero() {
		c = c.WithWalltime(func() (int64, int32) { return wall.Unix(), int32(wall.Nanosecond()) }, sys.ClockResolution(1))
		var mono atomic.Int64
		c = c.WithNanotime(func() int64 { return mono.Add(int64(time.Millisecond)) }, sys.ClockResolution(1))
	}
	return c
}

// close cancels the calls in flight and waits for them.
func (r *run) close() {
	r.callCancel()
	r.calls.Wait()
	r.guestCancel()
}

// finish fills out with the run's logs and result or error.
func (r *run) finish(out *sandbox.Outcome) {
	r.stdout.flush()
	r.stderr.flush()
	out.Logs, out.LogsTruncated, out.Partial = r.logs, r.logsTrunc, r.partial
	if r.runErr != nil {
		out.Err = r.runErr
		return
	}
	switch {
	case r.resultOver > 0:
		out.Err = sandbox.Errorf(sandbox.EOutputLimit, "Return less data: aggregate or summarize in the program.",
			fmt.Sprintf("the result is %d bytes, over the limit of %d bytes", r.resultOver, r.resultCap))
	case r.resultSet:
		var b bytes.Buffer
		if err := json.Compact(&b, r.result); err != nil || !utf8.Valid(r.result) {
			out.Err = sandbox.Errorf(sandbox.EResultInvalid, "Pass set_result the UTF-8 bytes of one JSON value.", "the result set by set_result is not valid JSON")
			return
		}
		out.Value = b.Bytes()
	case r.returned != nil:
		out.Value = r.returned
	default:
		out.Value = json.RawMessage("null")
	}
}

func numberJSON(t api.ValueType, v uint64) json.RawMessage {
	switch t {
	case api.ValueTypeI32:
		return strconv.AppendInt(nil, int64(int32(uint32(v))), 10)
	case api.ValueTypeI64:
		return strconv.AppendInt(nil, int64(v), 10)
	case api.ValueTypeF32, api.ValueTypeF64:
		f := api.DecodeF64(v)
		if t == api.ValueTypeF32 {
			f = float64(api.DecodeF32(v))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return json.RawMessage("null")
		}
		b, _ := json.Marshal(f)
		return b
	}
	return nil
}

// mapErr converts what wazero returned into the run's error.
func (r *run) mapErr(err error, instantiating bool) *sandbox.Error {
	if s := r.stopped(); s != nil {
		return s
	}
	if r.ctx.Err() != nil {
		return ctxError(r.ctx, r.limits.Timeout)
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() == 0 {
			return nil
		}
		return sandbox.Errorf(sandbox.EGuestError, "The program exited with a non-zero code; its logs (stderr) may say why.",
			fmt.Sprintf("exit code %d", exit.ExitCode()))
	}
	msg := err.Error()
	if firstLine(msg, 100) == "stack overflow" { // wazero's compiler reports it bare
		msg = "wasm error: " + msg
	}
	if trap, ok := strings.CutPrefix(msg, "wasm error: "); ok {
		reason := firstLine(trap, 200)
		where := ""
		if _, stack, ok := strings.Cut(trap, "wasm stack trace:\n\t"); ok {
			where = firstLine(stack, 200)
		}
		if reason == "stack overflow" {
			return sandbox.Errorf(sandbox.EStack, "Recurse less deeply, or iterate instead.", "wasm trap: call stack exhausted")
		}
		m := "wasm trap: " + reason
		if where != "" {
			m += " (in " + where + ")"
		}
		return sandbox.Errorf(sandbox.EGuestError, "", m)
	}
	if instantiating && !strings.Contains(msg, "recovered by wazero") {
		// Import resolution, data or element segments out of range.
		return sandbox.Errorf(sandbox.EModuleInvalid, "Import only the sandcall and wasi_snapshot_preview1 functions of bindings/abi.md, and keep segments within memory and tables.",
			"the module cannot be instantiated: "+firstLine(msg, 300))
	}
	// A panic in a host function is a bug in sandcall; its text may carry
	// a Go stack and paths, so none of it is reported.
	return sandbox.Errorf(sandbox.EInternal, "", "internal error in the WebAssembly host")
}

func firstLine(s string, max int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return sandbox.Cap(strings.ToValidUTF8(s, "\uFFFD"), max)
}

// Logs.

// log records one entry: control characters escaped, capped by the
// budget. p is not retained.
func (r *run) log(prefix string, p []byte, total int) {
	room := r.limits.MaxLogBytes - r.logBytes
	if room < 0 {
		room = 0
	}
	b := make([]byte, 0, min(len(prefix)+len(p)+8, room+8))
	b = append(b, prefix...)
	b = appendEscaped(b, p, room+1)
	// An empty entry costs a byte (see keep): it must fill the budget too.
	if max(len(b), 1) <= room && len(p) == total {
		r.keep(string(b))
		return
	}
	r.logsTrunc = true
	if room > 0 {
		cut := b[:min(room, len(b))]
		for len(cut) > 0 && !utf8.Valid(cut) {
			cut = cut[:len(cut)-1]
		}
		r.keep(string(cut))
	}
	r.logBytes = r.limits.MaxLogBytes
	r.logDropped += max(1, len(prefix)+total-room)
	if r.logDropped > maxLogDropped {
		r.stop(sandbox.Errorf(sandbox.EOutputLimit,
			"Log less: output is capped; return data in the result instead.",
			fmt.Sprintf("the program kept logging past its %d-byte log budget", r.limits.MaxLogBytes)))
	}
}

// setPartial records a value stored with progress (compact JSON, within
// the result budget) and hands it to the host's PartialSink.
func (r *run) setPartial(b []byte) {
	r.partial = b
	if r.psink != nil {
		r.psink.Partial(b)
	}
}

func (r *run) keep(s string) {
	r.logs = append(r.logs, s)
	r.logBytes += max(len(s), 1)
	if r.sink != nil {
		r.sink.Log(s)
	}
}

// appendEscaped appends p as valid UTF-8 with control characters escaped
// (as the JavaScript console does), stopping once b holds more than max
// bytes.
func appendEscaped(b, p []byte, max int) []byte {
	for len(p) > 0 && len(b) <= max {
		c, n := utf8.DecodeRune(p)
		p = p[n:]
		switch {
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0x2028 || c == 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069):
			b = fmt.Appendf(b, "\\u%04x", c)
		default:
			b = utf8.AppendRune(b, c) // utf8.RuneError for invalid bytes
		}
	}
	return b
}

// lineWriter turns WASI stdout/stderr into log entries, one per line. It
// runs on the guest goroutine (fd_write is a host function).
type lineWriter struct {
	r       *run
	prefix  string
	buf     []byte
	dropped int // bytes of the current line not kept in buf
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		// Keep at most the log budget (plus a little) of one line.
		keep := min(len(chunk), max(0, w.r.limits.MaxLogBytes+8-len(w.buf)))
		w.buf = append(w.buf, chunk[:keep]...)
		w.dropped += len(chunk) - keep
		if i < 0 {
			break
		}
		w.emit()
		p = p[i+1:]
		if w.r.ending() {
			break
		}
	}
	w.r.unwindIfEnding()
	return n, nil
}

// flush emits an unterminated last line.
func (w *lineWriter) flush() {
	if len(w.buf) > 0 || w.dropped > 0 {
		w.emit()
	}
}

func (w *lineWriter) emit() {
	w.r.log(w.prefix, w.buf, len(w.buf)+w.dropped)
	w.buf, w.dropped = w.buf[:0], 0
}
