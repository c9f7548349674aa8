package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// burstSize is how many expense runs the burst workload sends at once.
const burstSize = 64

// procCPU returns the CPU time (user + system) a process has used itself
// and the CPU time of its children that it has reaped, from
// /proc/PID/stat; zero if unknown.
func procCPU(pid int) (self, children time.Duration) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, 0
	}
	n := func(k int) time.Duration {
		v, _ := strconv.ParseInt(f[k], 10, 64)
		return time.Duration(v) * time.Second / 100 // USER_HZ
	}
	// After the state (f[0]): utime f[11], stime f[12], cutime f[13], cstime f[14].
	return n(11) + n(12), n(13) + n(14)
}

// cpuMeter measures the CPU a server process and its workers use over a
// window: the server's own time, and its workers' (those reaped in the
// window plus the live ones' growth).
type cpuMeter struct {
	pid       int // the server; 0: this process
	server0   time.Duration
	reaped0   time.Duration
	live0     map[int]time.Duration
	workerPID func() []int // live workers
}

func newCPUMeter(pid int, workers func() []int) *cpuMeter {
	m := &cpuMeter{pid: pid, workerPID: workers}
	m.server0, m.reaped0 = m.read()
	m.live0 = m.liveCPU()
	return m
}

func (m *cpuMeter) read() (self, reaped time.Duration) {
	if m.pid != 0 {
		return procCPU(m.pid)
	}
	var ru, rc syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &rc)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(ru.Utime) + tv(ru.Stime), tv(rc.Utime) + tv(rc.Stime)
}

func (m *cpuMeter) liveCPU() map[int]time.Duration {
	out := map[int]time.Duration{}
	if m.workerPID == nil {
		return out
	}
	for _, p := range m.workerPID() {
		if c, _ := procCPU(p); c > 0 {
			out[p] = c
		}
	}
	return out
}

// perJob returns the server's and the workers' CPU per job since the meter
// was made, in milliseconds.
func (m *cpuMeter) perJob(jobs int) (server, workers float64) {
	s, r := m.read()
	live := m.liveCPU()
	w := r - m.reaped0
	for p, c := range live {
		w += c - m.live0[p]
	}
	for p, c := range m.live0 {
		if _, ok := live[p]; !ok {
			w -= c // reaped in the window: its whole time is in r
		}
	}
	per := func(d time.Duration) float64 { return ms(d) / float64(max(jobs, 1)) }
	return per(s - m.server0), per(max(w, 0))
}

// burstRefill is how long the default transport rate limit (50 requests a
// second, bursts of 200, per principal) takes to refill a round's
// requests: rounds start at least that far apart (an untimed pause after a
// quicker round). The burst's server is unauthenticated on loopback, where
// no rate limit applies (RATIONALE.md, "Why is there no HTTP rate limit
// without authentication?"), so the pause only costs the bench's own time;
// it was needed when the limit applied to the one local principal.
const burstRefill = burstSize * time.Second / 50

// burst starts `sandcall serve --http` with the demo tools and the default
// settings, and sends it burstSize concurrent expense runs over one MCP
// session, rounds times (after one untimed round), burstRefill apart. Every
// run must come back with the exact result: an E_BUSY or a 429 fails the
// bench. The row's times are the rounds' wall times (first request to last
// result).
func burst(ctx context.Context, exe string, rounds int, reuse int) (Row, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := startHTTP(ctx, exe, "", "--worker-reuse", strconv.Itoa(reuse))
	if err != nil {
		return Row{}, err
	}
	defer s.close()
	cs, err := s.client(ctx)
	if err != nil {
		return Row{}, err
	}
	defer cs.Close()
	w := workloadNamed("expense")
	round := func() error { return concurrently(ctx, cs, burstSize, w.Program, w.Input, w.Want) }
	last := time.Now()
	if err := round(); err != nil { // untimed: the server warms up
		return Row{}, err
	}
	pid := s.pid()
	meter := newCPUMeter(pid, func() []int { return childPIDs(pid) })
	var ds []time.Duration
	for i := 0; i < rounds; i++ {
		time.Sleep(time.Until(last.Add(burstRefill)))
		t0 := time.Now()
		last = t0
		if err := round(); err != nil {
			return Row{}, err
		}
		ds = append(ds, time.Since(t0))
	}
	row := summarize("burst", "process", ds, 0)
	row.Runs = rounds * burstSize
	row.ServerCPUMS, row.WorkerCPUMS = meter.perJob(rounds * burstSize)
	return row, nil
}

// concurrently sends n run_code calls of code at once over cs and waits
// for them all; every result must be want.
func concurrently(ctx context.Context, cs *mcp.ClientSession, n int, code string, input json.RawMessage, want string) error {
	var in any
	if input != nil {
		_ = json.Unmarshal(input, &in)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := runCode(ctx, cs, code, in, want); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	var first error
	for err := range errs {
		if failed++; first == nil {
			first = err
		}
	}
	if first != nil {
		return fmt.Errorf("%d of %d runs failed; first: %w", failed, n, first)
	}
	return nil
}
