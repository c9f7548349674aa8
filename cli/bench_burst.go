package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
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

// childPIDs lists the live children of pid (every thread's).
func childPIDs(pid int) []int {
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
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
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(max(jobs, 1)) }
	return ms(s - m.server0), ms(max(w, 0))
}

// benchBurst starts `sandcall serve --http` with the demo tools and the
// default pool, and sends it burstSize concurrent expense runs over one MCP
// session, rounds times (after one untimed round). Every run must come back
// with the exact result: an E_BUSY fails the bench. The row's times are the
// rounds' wall times (first request to last result).
func benchBurst(ctx context.Context, rounds int, reuse int) (benchRow, error) {
	self, err := os.Executable()
	if err != nil {
		return benchRow{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "serve", "--demo", "--http", "127.0.0.1:0", "--worker-reuse", strconv.Itoa(reuse))
	cmd.Dir = os.TempDir() // no sandcall.yaml of the working directory
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return benchRow{}, err
	}
	if err := cmd.Start(); err != nil {
		return benchRow{}, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	urlc := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`listening on (http://\S+/mcp)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-urlc:
	case <-time.After(30 * time.Second):
		return benchRow{}, errors.New("burst: the server did not start listening")
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "sandcall-bench", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		return benchRow{}, err
	}
	defer cs.Close()
	w := workloadNamed("expense")
	var input any
	_ = json.Unmarshal(w.Input, &input)
	round := func() error {
		var wg sync.WaitGroup
		errs := make(chan error, burstSize)
		for i := 0; i < burstSize; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": w.Program, "input": input}})
				if err != nil {
					errs <- err
					return
				}
				var out struct {
					OK     bool            `json:"ok"`
					Result json.RawMessage `json:"result"`
					Error  *struct{ Code, Message string }
				}
				b, _ := json.Marshal(res.StructuredContent)
				_ = json.Unmarshal(b, &out)
				if !out.OK || !jsonEqual(out.Result, []byte(w.Want)) {
					errs <- fmt.Errorf("burst run: ok=%v %.60s %+v", out.OK, out.Result, out.Error)
				}
			}()
		}
		wg.Wait()
		close(errs)
		n := 0
		var first error
		for err := range errs {
			if n++; first == nil {
				first = err
			}
		}
		if first != nil {
			return fmt.Errorf("%d of %d runs failed; first: %w", n, burstSize, first)
		}
		return nil
	}
	if err := round(); err != nil { // untimed: the server warms up
		return benchRow{}, err
	}
	pid := cmd.Process.Pid
	meter := newCPUMeter(pid, func() []int { return childPIDs(pid) })
	var ds []time.Duration
	for i := 0; i < rounds; i++ {
		t0 := time.Now()
		if err := round(); err != nil {
			return benchRow{}, err
		}
		ds = append(ds, time.Since(t0))
	}
	row := summarize("burst", "process", ds, 0)
	row.Runs = rounds * burstSize
	row.ServerCPUMS, row.WorkerCPUMS = meter.perJob(rounds * burstSize)
	return row, nil
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}
