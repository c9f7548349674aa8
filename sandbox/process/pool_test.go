package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sandcall/sandcall/internal/testenv"
	"github.com/sandcall/sandcall/sandbox"
)

// The test binary doubles as the worker: started with this argument it
// serves one job with scriptExec, the way `sandcall worker` serves one with
// the JS engine.
const workerArg = "sandcall-test-worker"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == workerArg {
		in, out := os.NewFile(3, "in"), os.NewFile(4, "out")
		err := ServeWorker(context.Background(), in, out, WorkerConfig{
			Executor: scriptExec{},
			Restrict: func() error {
				if testenv.Race {
					return nil // ThreadSanitizer needs terabytes of address space
				}
				// The Go runtime's own reservations plus 512 MiB: enough for
				// every script but "alloc".
				lim := vmSize() + 512<<20
				return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim})
			},
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// vmSize returns this process's virtual memory size.
func vmSize() uint64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmSize:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 4 << 30
}

// scriptExec interprets a tiny command language so that the supervisor can be
// tested against real worker processes that misbehave on demand. The JS
// engine's hostile programs run through the real binary in cmd/sandcall.
type scriptExec struct{}

func (scriptExec) Execute(ctx context.Context, job *sandbox.Job, host sandbox.Host) *sandbox.Outcome {
	f := strings.Fields(job.Program.Source)
	arg := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	switch arg(0) {
	case "return":
		return &sandbox.Outcome{Value: json.RawMessage(arg(1))}
	case "calls":
		n, _ := strconv.Atoi(arg(1))
		var wg sync.WaitGroup
		sum := make([]int, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := host.Call(ctx, "ping", json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)))
				if err == nil {
					sum[i], _ = strconv.Atoi(string(res))
				}
			}()
		}
		wg.Wait()
		t := 0
		for _, v := range sum {
			t += v
		}
		return &sandbox.Outcome{Value: json.RawMessage(strconv.Itoa(t))}
	case "slowfast": // starts "slow" and "fast" in one batch; logs once fast is answered
		ah := host.(sandbox.AsyncHost)
		type answer struct {
			res json.RawMessage
			err error
		}
		slow, fast := make(chan answer, 1), make(chan answer, 1)
		ah.StartCall(ctx, "slow", nil, func(r json.RawMessage, err error) { slow <- answer{r, err} })
		ah.StartCall(ctx, "fast", nil, func(r json.RawMessage, err error) { fast <- answer{r, err} })
		ah.Flush()
		f := <-fast
		host.(sandbox.LogSink).Log("fast answered")
		s := <-slow
		if f.err != nil || s.err != nil {
			return &sandbox.Outcome{Err: sandbox.AsError(errors.Join(f.err, s.err), sandbox.EToolFailed)}
		}
		return &sandbox.Outcome{Value: json.RawMessage("[" + string(f.res) + "," + string(s.res) + "]")}
	case "toolerror":
		_, err := host.Call(ctx, "nope", nil)
		return &sandbox.Outcome{Err: sandbox.AsError(err, "")}
	case "swallow": // calls tool arg(1), ignores its error, returns 1
		_, _ = host.Call(ctx, arg(1), nil)
		return &sandbox.Outcome{Value: json.RawMessage("1")}
	case "log":
		n, _ := strconv.Atoi(arg(1))
		var logs []string
		for i := 0; i < n; i++ {
			e := "line " + strconv.Itoa(i)
			logs = append(logs, e)
			host.(sandbox.LogSink).Log(e)
		}
		if arg(2) == "crash" {
			os.Exit(7)
		}
		return &sandbox.Outcome{Value: json.RawMessage("null"), Logs: logs}
	case "partial": // stores N partial results, logs, then hangs until killed
		n, _ := strconv.Atoi(arg(1))
		for i := 1; i <= n; i++ {
			host.(sandbox.PartialSink).Partial(json.RawMessage(fmt.Sprintf(`{"done":%d}`, i)))
		}
		host.(sandbox.LogSink).Log("saved")
		time.Sleep(time.Hour)
	case "partial-big": // a partial result over the budget: a worker bug
		host.(sandbox.PartialSink).Partial(json.RawMessage(`"` + strings.Repeat("x", 300<<10) + `"`))
		time.Sleep(time.Hour)
	case "tiny-logs": // a result of N bytes with 1 MiB of logs in one-byte entries that JSON writes in five: "\\",
		n, _ := strconv.Atoi(arg(1))
		logs := make([]string, sandbox.MaxKeptLogBytes)
		for i := range logs {
			logs[i] = `\`
		}
		return &sandbox.Outcome{Value: json.RawMessage(`"` + strings.Repeat("x", n-2) + `"`), Logs: logs}
	case "empty-logs": // streams N empty log entries, then dies
		n, _ := strconv.Atoi(arg(1))
		for i := 0; i < n; i++ {
			host.(sandbox.LogSink).Log("")
		}
		os.Exit(7)
	case "html": // a partial result, logs and a result of N bytes, all full of '<', '&' and U+2028
		host.(sandbox.PartialSink).Partial(json.RawMessage(`"` + strings.Repeat("<", 250<<10) + `"`))
		var logs []string
		for i := 0; i < 512; i++ { // 1 MiB
			e := strings.Repeat("&\u2028", 512)
			logs = append(logs, e)
			host.(sandbox.LogSink).Log(e)
		}
		n, _ := strconv.Atoi(arg(1))
		return &sandbox.Outcome{Value: json.RawMessage(`"` + strings.Repeat(">", n-2) + `"`), Logs: logs,
			Partial: json.RawMessage(`"` + strings.Repeat("<", 250<<10) + `"`)}
	case "big": // a result of N bytes
		n, _ := strconv.Atoi(arg(1))
		return &sandbox.Outcome{Value: json.RawMessage(`"` + strings.Repeat("x", n-2) + `"`)}
	case "sleep": // ignores ctx, like a builtin that cannot be interrupted
		d, _ := time.ParseDuration(arg(1))
		time.Sleep(d)
		return &sandbox.Outcome{Value: json.RawMessage(`"woke"`)}
	case "alloc":
		var keep [][]byte
		for {
			b := make([]byte, 64<<20)
			for i := range b {
				b[i] = 1
			}
			keep = append(keep, b)
		}
	case "stack":
		var f func(int) int
		f = func(n int) int { return f(n+1) + 1 }
		return &sandbox.Outcome{Value: json.RawMessage(strconv.Itoa(f(0)))}
	case "exit":
		os.Exit(3)
	case "partial-stack": // dies while "writing" a frame: half a header, then a stack overflow
		out := os.NewFile(4, "out")
		_, _ = out.Write([]byte{0, 0})
		var f func(int) int
		f = func(n int) int { return f(n+1) + 1 }
		return &sandbox.Outcome{Value: json.RawMessage(strconv.Itoa(f(0)))}
	case "garbage":
		out := os.NewFile(4, "out")
		_, _ = out.Write([]byte{0, 0, 0, 5, 'C', 'x', 'y', 'z', 'w'})
		time.Sleep(10 * time.Second)
	case "huge-frame":
		out := os.NewFile(4, "out")
		_, _ = out.Write([]byte{0x7f, 0xff, 0xff, 0xff})
		time.Sleep(10 * time.Second)
	case "pid":
		return &sandbox.Outcome{Value: json.RawMessage(strconv.Itoa(os.Getpid()))}
	case "spin": // N goroutines burn CPU, ignoring ctx, until killed
		n, _ := strconv.Atoi(arg(1))
		for i := 0; i < n; i++ {
			go func() {
				for x := 0; ; x++ {
					_ = x
				}
			}()
		}
		select {}
	case "env":
		b, _ := json.Marshal(os.Environ())
		return &sandbox.Outcome{Value: b}
	case "fds":
		ents, _ := os.ReadDir("/proc/self/fd")
		var fds []string
		for _, e := range ents {
			l, _ := os.Readlink("/proc/self/fd/" + e.Name())
			fds = append(fds, e.Name()+"="+l)
		}
		b, _ := json.Marshal(fds)
		return &sandbox.Outcome{Value: b}
	}
	return &sandbox.Outcome{Err: sandbox.Errorf(sandbox.ESyntax, "", "unknown script")}
}

// pingHost answers ping with n+1 and everything else with E_TOOL_UNKNOWN.
type pingHost struct {
	mu    sync.Mutex
	calls int
}

func (h *pingHost) Call(_ context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	h.mu.Lock()
	h.calls++
	h.mu.Unlock()
	if tool != "ping" {
		return nil, sandbox.Errorf(sandbox.EToolUnknown, "", "no tool "+tool)
	}
	var a struct{ N int }
	_ = json.Unmarshal(args, &a)
	return json.RawMessage(strconv.Itoa(a.N + 1)), nil
}

func newPool(t *testing.T, cfg Config) *Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Command = []string{exe, workerArg}
	cfg.Logger = slog.New(slog.NewTextHandler(tWriter{t}, nil))
	if cfg.Size == 0 {
		cfg.Size = 2
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		p.mu.Lock()
		n := len(p.live)
		p.mu.Unlock()
		if n != 0 {
			t.Errorf("%d workers still alive after Close", n)
		}
	})
	return p
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func job(src string, timeout time.Duration) *sandbox.Job {
	return &sandbox.Job{RunID: "t", Program: sandbox.Program{Source: src}, Limits: sandbox.Limits{Timeout: timeout}.Resolve()}
}

func TestPoolOutcomes(t *testing.T) {
	p := newPool(t, Config{Size: 2, Grace: 50 * time.Millisecond})
	for _, tc := range []struct {
		src   string
		want  sandbox.Code
		value string
	}{
		{"return [1,2,3]", "", "[1,2,3]"},
		{"calls 40", "", "820"},
		{"toolerror", sandbox.EToolUnknown, ""},
		{"sleep 5s", sandbox.ETimeout, ""},
		{"alloc", sandbox.EMemory, ""}, // skipped under -race: see below
		{"stack", sandbox.EStack, ""},
		{"partial-stack", sandbox.EStack, ""}, // a truncated frame is a death, not a protocol error
		{"exit", sandbox.EWorkerCrashed, ""},
		{"garbage", sandbox.EWorkerCrashed, ""},
		{"huge-frame", sandbox.EWorkerCrashed, ""},
		{"env", "", ""},
		{"return 1", "", "1"}, // the pool recovered from all of the above
	} {
		t.Run(tc.src, func(t *testing.T) {
			if tc.src == "alloc" && testenv.Race {
				t.Skip("under -race the worker cannot have an address-space limit (ThreadSanitizer reserves terabytes); the E_MEMORY path is tested without -race and through the real binary")
			}
			// The deadline is the limit the case is about (sleep), or else
			// the longest, a hang guard: a stack overflow under -race on 2
			// loaded cores took over 5 s (E_TIMEOUT for E_STACK).
			timeout := sandbox.MaxTimeout
			if tc.want == sandbox.ETimeout {
				timeout = 300 * time.Millisecond
			}
			o := p.Execute(context.Background(), job(tc.src, timeout), &pingHost{})
			var got sandbox.Code
			if o.Err != nil {
				got = o.Err.Code
			}
			if got != tc.want {
				t.Fatalf("code = %q, want %q (%v)", got, tc.want, o.Err)
			}
			if tc.value != "" && string(o.Value) != tc.value {
				t.Fatalf("value = %s, want %s", o.Value, tc.value)
			}
			if o.Err != nil && (o.Err.Message == "" || strings.Contains(o.Err.Message, "goroutine")) {
				t.Errorf("message %q", o.Err.Message)
			}
		})
	}
}

func TestWorkerHoldsNothing(t *testing.T) {
	t.Setenv("SANDCALL_CANARY_SECRET", "canary-5f1d")
	p := newPool(t, Config{Size: 1})
	o := p.Execute(context.Background(), job("env", time.Second), &pingHost{})
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	var env []string
	_ = json.Unmarshal(o.Value, &env)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GOMAXPROCS=") && !strings.HasPrefix(kv, "GODEBUG=") {
			t.Errorf("worker environment holds %q; want only the Go runtime's settings", kv)
		}
	}
	o = p.Execute(context.Background(), job("fds", time.Second), &pingHost{})
	var fds []string
	_ = json.Unmarshal(o.Value, &fds)
	t.Logf("worker fds: %q", fds)
	for _, fd := range fds {
		name, target, _ := strings.Cut(fd, "=")
		switch {
		case name == "0" || name == "1" || name == "2": // /dev/null and the stderr pipe
		case name == "3" || name == "4": // the frame pipes
		case strings.HasPrefix(target, "anon_inode:") || strings.HasPrefix(target, "pipe:"): // Go runtime's poller
		case target == "" || strings.HasPrefix(target, "/proc/") && strings.HasSuffix(target, "/fd"): // the listing itself
		default:
			t.Errorf("worker holds an unexpected open file: fd %s → %s", name, target)
		}
	}
}

func TestPartialLogsSurviveACrash(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	o := p.Execute(context.Background(), job("log 5 crash", time.Second), &pingHost{})
	if o.Err == nil || o.Err.Code != sandbox.EWorkerCrashed {
		t.Fatalf("err = %v, want E_WORKER_CRASHED", o.Err)
	}
	if len(o.Logs) != 5 || o.Logs[4] != "line 4" {
		t.Fatalf("logs = %q, want the 5 lines written before the crash", o.Logs)
	}
}

func TestBusy(t *testing.T) {
	p := newPool(t, Config{Size: 1, Queue: -1})
	// Without a queue a job finds the pool warm or gets E_BUSY: wait for the
	// worker (taken from the ready channel and put back, no polling).
	w := <-p.ready
	p.ready <- w
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newRunningHost()
	done := make(chan *sandbox.Outcome)
	go func() { done <- p.Execute(ctx, job("partial 1", time.Minute), h) }()
	<-h.running // the only worker is taken: it streamed a value and hangs
	o := p.Execute(context.Background(), job("return 1", 10*time.Second), &pingHost{})
	// E_BUSY, unless the refill was quick enough to serve it.
	if o.Err != nil && (o.Err.Code != sandbox.EBusy || o.Err.Hint == "") {
		t.Fatalf("second job: %v, want E_BUSY with a hint, or success", o.Err)
	}
	cancel()
	if o := <-done; o.Err == nil || o.Err.Code != sandbox.ECancelled {
		t.Fatalf("first job: %v, want E_CANCELLED", o.Err)
	}
}

// runningHost closes running when the worker streams its first partial
// value: the job is then running in the worker, whatever the machine's load.
type runningHost struct {
	pingHost
	once    sync.Once
	running chan struct{}
	on      func(json.RawMessage) // optional, called with every value
}

func newRunningHost() *runningHost { return &runningHost{running: make(chan struct{})} }

func (h *runningHost) Partial(v json.RawMessage) {
	if h.on != nil {
		h.on(v)
	}
	h.once.Do(func() { close(h.running) })
}

func TestQueueWaitDoesNotEatTimeLimit(t *testing.T) {
	p := newPool(t, Config{Size: 1, QueueTimeout: 5 * time.Second})
	var wg sync.WaitGroup
	out := make([]*sandbox.Outcome, 3)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each job sleeps 600 ms of its 1.5 s budget (900 ms of slack
			// for a loaded machine); the last one queues behind 1.2 s of the
			// others' sleeps, so it would miss its deadline if waiting
			// counted.
			out[i] = p.Execute(context.Background(), job("sleep 600ms", 1500*time.Millisecond), &pingHost{})
		}()
	}
	wg.Wait()
	for i, o := range out {
		if o.Err != nil {
			t.Errorf("job %d: %v", i, o.Err)
		}
	}
}

func TestCancel(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	o := p.Execute(ctx, job("sleep 10s", 20*time.Second), &pingHost{})
	if o.Err == nil || !errors.Is(o.Err, context.Canceled) {
		t.Fatalf("err = %v, want E_CANCELLED", o.Err)
	}
}

func TestKilledFromOutside(t *testing.T) {
	pids := make(chan int, 16)
	p := newPool(t, Config{Size: 1, OnStart: func(pid int) error { pids <- pid; return nil }})
	pid := <-pids
	// Killed once the job runs in it (it streamed a value), not before:
	// the pool would replace a worker that died idle.
	h := newRunningHost()
	go func() { <-h.running; _ = syscall.Kill(pid, syscall.SIGKILL) }()
	o := p.Execute(context.Background(), job("partial 1", time.Minute), h)
	if o.Err == nil || o.Err.Code != sandbox.EWorkerCrashed {
		t.Fatalf("err = %v, want E_WORKER_CRASHED", o.Err)
	}
	if o := p.Execute(context.Background(), job("return 2", time.Second), &pingHost{}); o.Err != nil || string(o.Value) != "2" {
		t.Fatalf("after the kill: %s, %v", o.Value, o.Err)
	}
}

func TestNoOrphansAfterClose(t *testing.T) {
	pids := make(chan int, 64)
	exe, _ := os.Executable()
	p, err := New(Config{Command: []string{exe, workerArg}, Size: 3, OnStart: func(pid int) error { pids <- pid; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	h := newRunningHost()
	done := make(chan struct{})
	go func() { defer close(done); p.Execute(context.Background(), job("partial 1", time.Minute), h) }()
	<-h.running // a job runs in a worker
	p.Close()
	<-done
	close(pids)
	n := 0
	for pid := range pids {
		n++
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("worker %d still alive after Close", pid)
		}
	}
	if n == 0 {
		t.Fatal("no worker started")
	}
}

// BenchmarkPoolRoundTrip measures one job on a warm pool: the latency a
// client sees when a worker is ready (refilling is not timed).
func BenchmarkPoolRoundTrip(b *testing.B) {
	exe, _ := os.Executable()
	p, err := New(Config{Command: []string{exe, workerArg}, Size: 2})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	h := &pingHost{}
	for b.Loop() {
		b.StopTimer()
		for len(p.ready) < p.cfg.Size {
			time.Sleep(100 * time.Microsecond)
		}
		b.StartTimer()
		if o := p.Execute(context.Background(), job("return 1", time.Second), h); o.Err != nil {
			b.Fatal(o.Err)
		}
	}
}

func BenchmarkPoolCalls(b *testing.B) {
	exe, _ := os.Executable()
	p, err := New(Config{Command: []string{exe, workerArg}, Size: runtime.NumCPU()})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	h := &pingHost{}
	for b.Loop() {
		if o := p.Execute(context.Background(), job("calls 1000", 10*time.Second), h); o.Err != nil {
			b.Fatal(o.Err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "calls/s")
}

// TestPartialSurvivesTheKill: values stored with progress(value) stream to
// the server, so a worker killed at its deadline or on cancellation still
// leaves the last one, with its logs.
func TestPartialSurvivesTheKill(t *testing.T) {
	p := newPool(t, Config{Size: 1, Grace: 50 * time.Millisecond})
	sink := &partialHost{}
	// The deadline is the only way this job ends; 2 s leave a loaded
	// machine time to stream the three values first.
	o := p.Execute(context.Background(), job("partial 3", 2*time.Second), sink)
	if o.Err == nil || o.Err.Code != sandbox.ETimeout {
		t.Fatalf("err = %v, want E_TIMEOUT", o.Err)
	}
	if string(o.Partial) != `{"done":3}` || len(o.Logs) != 1 || o.Logs[0] != "saved" {
		t.Fatalf("partial %s, logs %q; want the last value and the log", o.Partial, o.Logs)
	}
	// The stream is coalesced: values stored in quick succession may be
	// skipped, never the last one, and the order holds.
	got := sink.values()
	if len(got) == 0 || got[len(got)-1] != `{"done":3}` || !sort.StringsAreSorted(got) {
		t.Fatalf("host's PartialSink saw %q, want values in order ending with the last", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newRunningHost()
	h.on = func(v json.RawMessage) { // cancelled once the last value arrived
		if string(v) == `{"done":2}` {
			cancel()
		}
	}
	o = p.Execute(ctx, job("partial 2", time.Minute), h)
	if o.Err == nil || o.Err.Code != sandbox.ECancelled || string(o.Partial) != `{"done":2}` {
		t.Fatalf("cancelled: err %v, partial %s; want E_CANCELLED with {\"done\":2}", o.Err, o.Partial)
	}

	// A partial result over the budget is a worker the server stops
	// trusting.
	o = p.Execute(context.Background(), job("partial-big", 5*time.Second), &pingHost{})
	if o.Err == nil || o.Err.Code != sandbox.EWorkerCrashed || o.Partial != nil {
		t.Fatalf("oversized partial: err %v, partial %d bytes; want E_WORKER_CRASHED and none", o.Err, len(o.Partial))
	}
}

// TestKeepResultBytes: a result over MaxResultBytes crosses the pool whole
// when the job keeps it, and is E_OUTPUT_LIMIT otherwise or past the keep.
func TestKeepResultBytes(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	for _, tc := range []struct {
		size, keep int
		want       sandbox.Code
	}{
		{300 << 10, 0, sandbox.EOutputLimit},
		{300 << 10, 1 << 20, ""},
		{2 << 20, 1 << 20, sandbox.EOutputLimit},
		{6 << 20, sandbox.MaxKeptResultBytes, ""},
	} {
		j := job(fmt.Sprintf("big %d", tc.size), 10*time.Second)
		j.KeepResultBytes = tc.keep
		o := p.Execute(context.Background(), j, &pingHost{})
		var got sandbox.Code
		if o.Err != nil {
			got = o.Err.Code
		}
		if got != tc.want || (got == "" && len(o.Value) != tc.size) {
			t.Errorf("size %d keep %d: code %q, %d bytes; want %q", tc.size, tc.keep, got, len(o.Value), tc.want)
		}
	}
}

// TestFramesKeepSizes: what crosses the pipe is measured as the engine
// measured it. Encoding a frame must not inflate '<', '>' and '&' six-fold
// (encoding/json's HTML escaping): a partial result within its budget would
// come out over it and kill the worker, and a result kept whole for paging
// plus its logs would no longer fit in a frame.
func TestFramesKeepSizes(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	const size = sandbox.MaxKeptResultBytes - 16
	j := job(fmt.Sprintf("html %d", size), 2*time.Minute)
	j.KeepResultBytes = sandbox.MaxKeptResultBytes
	j.Limits.MaxLogBytes = sandbox.MaxKeptLogBytes
	sink := &partialHost{}
	o := p.Execute(context.Background(), j, sink)
	if o.Err != nil {
		t.Fatalf("err = %v, want none", o.Err)
	}
	logBytes := 0
	for _, l := range o.Logs {
		logBytes += len(l)
	}
	if len(o.Value) != size || len(o.Partial) != 250<<10+2 || logBytes != sandbox.MaxKeptLogBytes {
		t.Fatalf("value %d bytes, partial %d, logs %d; want %d, %d, %d", len(o.Value), len(o.Partial), logBytes,
			size, 250<<10+2, sandbox.MaxKeptLogBytes)
	}
	for _, v := range sink.values() {
		if len(v) != 250<<10+2 {
			t.Fatalf("host's PartialSink saw a value of %d bytes, want %d", len(v), 250<<10+2)
		}
	}

	// The most JSON a kept log can take: a million one-byte entries.
	j = job(fmt.Sprintf("tiny-logs %d", size), 2*time.Minute)
	j.KeepResultBytes = sandbox.MaxKeptResultBytes
	j.Limits.MaxLogBytes = sandbox.MaxKeptLogBytes
	o = p.Execute(context.Background(), j, &pingHost{})
	if o.Err != nil || len(o.Value) != size || len(o.Logs) != sandbox.MaxKeptLogBytes {
		t.Fatalf("tiny logs: err %v, value %d bytes, %d entries", o.Err, len(o.Value), len(o.Logs))
	}
}

// TestEmptyLogEntriesAreCounted: a worker streaming empty log entries
// fills the server's copy of the logs like any other, a byte each, instead
// of growing it without bound.
func TestEmptyLogEntriesAreCounted(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	j := job("empty-logs 5000", 2*time.Minute)
	j.Limits.MaxLogBytes = 100
	o := p.Execute(context.Background(), j, &pingHost{})
	if o.Err == nil || o.Err.Code != sandbox.EWorkerCrashed {
		t.Fatalf("err = %v, want E_WORKER_CRASHED", o.Err)
	}
	if len(o.Logs) != 100 || !o.LogsTruncated {
		t.Fatalf("%d entries kept (truncated %v), want 100", len(o.Logs), o.LogsTruncated)
	}
}

// partialHost records the partial results it is handed.
type partialHost struct {
	pingHost
	mu   sync.Mutex
	seen []string
}

func (h *partialHost) Partial(v json.RawMessage) {
	h.mu.Lock()
	h.seen = append(h.seen, string(v))
	h.mu.Unlock()
}

func (h *partialHost) values() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

// TestPartialFloodIsCoalesced: a program storing values in a tight loop
// does not send the server a frame for each (the server would spend a core
// decoding them); the last one still arrives.
func TestPartialFloodIsCoalesced(t *testing.T) {
	p := newPool(t, Config{Size: 1, Grace: 50 * time.Millisecond})
	sink := &partialHost{}
	// Only the deadline ends the job; 3 s leave a loaded machine under -race
	// time to store all 20,000 values first.
	o := p.Execute(context.Background(), job("partial 20000", 3*time.Second), sink)
	if o.Err == nil || o.Err.Code != sandbox.ETimeout || string(o.Partial) != `{"done":20000}` {
		t.Fatalf("err %v, partial %s; want E_TIMEOUT with the last value", o.Err, o.Partial)
	}
	if n := len(sink.values()); n > 1000 {
		t.Fatalf("the server was sent %d partial values for 20,000 stored in a loop", n)
	}
}
