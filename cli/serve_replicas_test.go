package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox/sandboxtest"
	"github.com/sandcall/sandcall/store/storetest"
)

// cluster is two `sandcall serve --http` replicas sharing a real
// redis-server, behind a real HAProxy doing plain round robin.
type cluster struct {
	redis   *storetest.Redis
	a, b    *proc
	dirs    [2]string // project dir of each replica (its gate FIFOs)
	effects string    // dir of the count and pay tools' shared tallies
	url     string    // HAProxy's /mcp
	haproxy *exec.Cmd
}

const clusterPolicy = `version: 1
rules:
  - name: ping-rate
    tools: [ping]
    rate: {calls: 3, per: 1h}
  - name: ask-pay
    tools: [pay]
    require_approval: true
`

// startCluster starts Redis, two replicas (each in its own project dir with
// the gate tool) and HAProxy. HAProxy gets its listening socket from the
// test (bind fd@3), so it is reachable as soon as it is started.
func startCluster(t *testing.T, extra ...string) *cluster {
	t.Helper()
	hp, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("skipped: haproxy is not installed (apt-get install haproxy; .ci/run does)")
	}
	c := &cluster{redis: storetest.StartRedis(t)}
	cfg := fmt.Sprintf("version: 1\nstore: %s\npolicy: policy.yaml\n", c.redis.URL)
	var ps [2]*proc
	for i := range ps {
		dir, _, _ := gateDir(t)
		for name, body := range map[string]string{"sandcall.yaml": cfg, "policy.yaml": clusterPolicy} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c.dirs[i] = dir
		if c.effects == "" {
			c.effects = t.TempDir()
		}
		writeEffectTools(t, dir, c.effects)
		ps[i] = serveIn(t, dir, "127.0.0.1:0", append([]string{"--demo", "--config", "sandcall.yaml"}, extra...)...)
	}
	c.a, c.b = ps[0], ps[1]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Retries only when the request never reached a replica (connection
	// refused: a dead replica) or was refused by a draining one (503): a
	// request a replica may have started is never sent twice. No reuse of
	// idle server connections: a request on an idle connection to a
	// replica that just died would fail although it never started.
	conf := fmt.Sprintf(`global
    maxconn 256
    log stdout format raw local0
defaults
    log global
    option httplog
    mode http
    timeout connect 2s
    timeout client 2m
    timeout server 2m
    retries 2
    option redispatch
    retry-on conn-failure 503
    http-reuse never
frontend mcp
    bind fd@3
    default_backend sandcall
backend sandcall
    balance roundrobin
    server a %s
    server b %s
`, strings.TrimPrefix(c.a.base, "http://"), strings.TrimPrefix(c.b.base, "http://"))
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(hp, "-db", "-f", path)
	cmd.ExtraFiles = []*os.File{f}
	var out sandboxtest.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		kill(cmd)
		if t.Failed() {
			t.Logf("haproxy output:\n%s", out.String())
		}
	})
	c.haproxy = cmd
	c.url = "http://" + ln.Addr().String() + "/mcp"
	return c
}

// client connects a go-sdk client (protocol 2026-07-28, the SDK's
// default: server/discover, no session) to url.
func client(t *testing.T, ctx context.Context, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" || cs.ID() != "" {
		t.Fatalf("client speaks %q with session %q, want 2026-07-28 without a session", v, cs.ID())
	}
	return cs
}

type runOut struct {
	OK               bool            `json:"ok"`
	Result           json.RawMessage `json:"result"`
	Truncated        bool            `json:"truncated"`
	OutputRef        string          `json:"output_ref"`
	OutputNextOffset int             `json:"output_next_offset"`
	Error            *struct {
		Code string `json:"code"`
		Hint string `json:"hint"`
	} `json:"error"`
}

func decodeText[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(textOf(res), &v); err != nil {
		t.Fatalf("result %s: %v", textOf(res), err)
	}
	return v
}

// TestReplicas: through HAProxy round robin, a 2026-07-28 client pages a
// cut result across both replicas, a rate limit of 3 holds across them,
// and killing one replica mid-run fails only its in-flight run.
func TestReplicas(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := client(t, ctx, c.url)

	t.Run("paging", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `return "x".repeat(400 * 1024)`}})
		if err != nil {
			t.Fatal(err)
		}
		r := decodeText[runOut](t, res)
		if !r.Truncated || r.OutputRef == "" {
			t.Fatalf("want a cut result with output_ref: %s", textOf(res))
		}
		var got string
		_ = json.Unmarshal(r.Result, &got)
		// One page from each replica directly (whichever ran the program,
		// the other one serves a page too), then the rest through HAProxy.
		off := r.OutputNextOffset
		for _, url := range []string{c.a.url, c.b.url, c.url} {
			pcs := client(t, ctx, url)
			for {
				res, err := pcs.CallTool(ctx, &mcp.CallToolParams{Name: "read_output", Arguments: map[string]any{"ref": r.OutputRef, "offset": off, "limit": 65536}})
				if err != nil || res.IsError {
					t.Fatalf("read_output via %s: %v %s", url, err, textOf(res))
				}
				p := decodeText[struct {
					Data       string `json:"data"`
					NextOffset int    `json:"next_offset"`
					EOF        bool   `json:"eof"`
				}](t, res)
				got += p.Data
				off = p.NextOffset
				if p.EOF || url != c.url {
					break
				}
			}
		}
		if want := `"` + strings.Repeat("x", 400<<10) + `"`; got != want {
			t.Fatalf("paged %d bytes, want %d", len(got), len(want))
		}
	})

	t.Run("rate limit", func(t *testing.T) {
		var ok, denied int
		for i := range 6 {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{"n": i}})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case !res.IsError:
				ok++
			case strings.Contains(string(textOf(res)), `"E_TOOL_DENIED"`) && strings.Contains(string(textOf(res)), "ping-rate"):
				denied++
			default:
				t.Fatalf("call %d: %s", i, textOf(res))
			}
		}
		if ok != 3 || denied != 3 {
			t.Fatalf("%d calls allowed and %d denied across the replicas, want 3 and 3", ok, denied)
		}
		// Both replicas counted some of them: the limit held across both.
		for _, p := range []*proc{c.a, c.b} {
			if n := pingCalls(t, p); n == 0 {
				t.Errorf("replica %s served no ping call: HAProxy did not alternate", p.base)
			}
		}
	})

	t.Run("approval across replicas", func(t *testing.T) { testApprovalAcross(t, ctx, c) })
	t.Run("direct approval across replicas", func(t *testing.T) { testDirectApprovalAcross(t, ctx, c) })

	t.Run("kill one mid-run", func(t *testing.T) {
		// Two programs held in the gate tool, one on each replica.
		type out struct {
			res *mcp.CallToolResult
			err error
		}
		var done [2]chan out
		startedOn := make(chan int, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Add(1)
			go func() { // whichever replica runs it reads "started"
				defer wg.Done()
				readFIFO(t, filepath.Join(c.dirs[i], "started.fifo"))
				startedOn <- i
			}()
		}
		for k := range 2 {
			done[k] = make(chan out, 1)
			go func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `return (await tools.gate({})) + 1`}})
				done[k] <- out{res, err}
			}()
			<-startedOn // run k is in flight before run k+1 starts
		}
		wg.Wait()
		// Replica a dies (SIGKILL: no drain); its gate script is released
		// at the end so that nothing outlives the test.
		t.Cleanup(func() { releaseNonblocking(filepath.Join(c.dirs[0], "release.fifo")) })
		if err := c.a.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = c.a.cmd.Wait() // gone: its port refuses connections
		writeFIFO(t, filepath.Join(c.dirs[1], "release.fifo"))
		var failed, succeeded int
		for k := range 2 {
			o := <-done[k]
			if o.err == nil && !o.res.IsError && strings.Contains(string(textOf(o.res)), `"result":8`) {
				succeeded++
			} else {
				failed++
			}
		}
		if failed != 1 || succeeded != 1 {
			t.Fatalf("%d runs failed and %d succeeded, want only the killed replica's run to fail", failed, succeeded)
		}
		for i := range 4 {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": fmt.Sprintf("return %d", i)}})
			if err != nil || res.IsError {
				t.Fatalf("request %d after the kill: %v %s", i, err, textOf(res))
			}
		}
	})
}

// pingCalls is the number of ping calls a replica served, from its metrics.
func pingCalls(t *testing.T, p *proc) int {
	t.Helper()
	resp, err := httpGet(p.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(resp, "\n") {
		if strings.HasPrefix(l, "sandcall_tool_calls_total{") && strings.Contains(l, `tool="ping"`) {
			var v float64
			fmt.Sscan(l[strings.LastIndex(l, " ")+1:], &v)
			n += int(v)
		}
	}
	return n
}

// releaseNonblocking releases a gate script still waiting on a FIFO, if
// any (no reader: nothing to do).
func releaseNonblocking(path string) {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	f.WriteString("go\n")
	f.Close()
}

func httpGet(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
