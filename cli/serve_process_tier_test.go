package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConcurrentRunsOverHTTP sends 64 concurrent run_code calls to a server
// with a pool of 4 warm workers: each must end with its result (the queue
// holds a burst of 64: no E_BUSY), and afterwards the server holds its warm
// pool plus at most 16 idle workers (max_running) kept for the principal —
// no worker leaked.
func TestConcurrentRunsOverHTTP(t *testing.T) {
	t.Parallel()
	url, cmd := startHTTP(t, "--demo", "--workers", "4")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const sessions, perSession = 8, 8
	prog := `let t = 0; for (let i = 0; i < 20; i++) t += await tools.ping({n: i}); return t`
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for s := 0; s < sessions; s++ {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		for i := 0; i < perSession; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": prog}})
				key := ""
				switch {
				case err != nil:
					key = "protocol error: " + err.Error()
				default:
					var r struct {
						OK     bool            `json:"ok"`
						Result json.RawMessage `json:"result"`
						Error  *struct{ Code string }
					}
					b, _ := json.Marshal(res.StructuredContent)
					_ = json.Unmarshal(b, &r)
					if r.OK {
						key = "ok:" + string(r.Result)
					} else if r.Error != nil {
						key = r.Error.Code
					}
				}
				mu.Lock()
				outcomes[key]++
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	t.Logf("outcomes: %v", outcomes)
	if outcomes["ok:210"] != sessions*perSession {
		t.Errorf("outcomes %v: want all %d calls ok", outcomes, sessions*perSession)
	}
	// Nothing leaked: once the refills are done, the server's children are
	// its 4 warm workers and at most 16 idle ones (max_running: 4 per
	// worker of the pool) kept for the principal's next runs.
	var kids []int
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		kids = children(cmd.Process.Pid)
		if len(kids) >= 4 && len(kids) <= 4+16 {
			break
		}
	}
	if len(kids) < 4 || len(kids) > 4+16 {
		t.Errorf("server has %d child processes after the load, want its 4 warm workers and at most 16 idle: %v", len(kids), kids)
	}
	kill(cmd)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if alive(kids) == 0 {
			return
		}
	}
	t.Errorf("workers %v outlived the server", kids)
}

// children returns the PIDs whose parent is pid and that are not zombies.
func children(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) && f[0] != "Z" {
			out = append(out, p)
		}
	}
	return out
}

func alive(pids []int) int {
	n := 0
	for _, p := range pids {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p)); err == nil && !strings.Contains(string(b), ") Z ") {
			n++
		}
	}
	return n
}
