package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMeasureReplicas prints, for docs/measurements/2026-12-mcp-server.md and the closing note of the
// multi-replica work: the median run_code round trip through HAProxy with
// Redis (two replicas) vs one replica without either, and the requests per
// second of tools/list and of a small run_code for one replica vs two
// behind HAProxy. It asserts nothing (timings are noisy on a shared
// machine) and runs only with SANDCALL_MEASURE=1.
func TestMeasureReplicas(t *testing.T) {
	if os.Getenv("SANDCALL_MEASURE") == "" {
		t.Skip("set SANDCALL_MEASURE=1 to measure")
	}
	var extra []string
	if iso := os.Getenv("SANDCALL_MEASURE_ISOLATION"); iso != "" {
		extra = []string{"--isolation", iso}
	}
	c := startCluster(t, extra...)
	single := serveIn(t, t.TempDir(), "127.0.0.1:0", append([]string{"--demo"}, extra...)...)
	ctx := context.Background()
	one, two := client(t, ctx, single.url), client(t, ctx, c.url)
	run := func(cs *mcp.ClientSession) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `return 1 + 1`}})
		if err == nil && res.IsError {
			t.Fatalf("run: %s", textOf(res))
		}
		return err
	}
	big := func(cs *mcp.ClientSession) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `return "x".repeat(300 * 1024)`}})
		if err == nil && (res.IsError || !strings.Contains(string(textOf(res)), "output_ref")) {
			t.Fatalf("big run: %.300s", textOf(res))
		}
		return err
	}
	for range 20 { // warm both
		run(one)
		run(two)
	}
	// Round trip, interleaved.
	var d1, d2 []time.Duration
	for range 300 {
		s := time.Now()
		if err := run(one); err != nil {
			t.Fatal(err)
		}
		d1 = append(d1, time.Since(s))
		s = time.Now()
		if err := run(two); err != nil {
			t.Fatal(err)
		}
		d2 = append(d2, time.Since(s))
	}
	m1, m2 := median(d1), median(d2)
	t.Logf("run_code round trip (return 1+1), median of 300 interleaved: one replica %v; HAProxy + Redis, two replicas %v; ratio %.2f", m1, m2, float64(m2)/float64(m1))
	d1, d2 = nil, nil
	for range 100 {
		s := time.Now()
		if err := big(one); err != nil {
			t.Fatal(err)
		}
		d1 = append(d1, time.Since(s))
		s = time.Now()
		if err := big(two); err != nil {
			t.Fatal(err)
		}
		d2 = append(d2, time.Since(s))
	}
	m1, m2 = median(d1), median(d2)
	t.Logf("run_code round trip with a cut 300 KiB result kept for read_output (memory vs Redis), median of 100 interleaved: one replica %v; HAProxy + Redis %v; ratio %.2f", m1, m2, float64(m2)/float64(m1))

	// Throughput: 8 concurrent clients, each its own session, fixed count.
	for _, w := range []struct {
		name string
		f    func(*mcp.ClientSession) error
		n    int
	}{{"tools/list", nil, 3000}, {"run_code", run, 400}} {
		for _, round := range []int{1, 2} {
			for _, target := range []struct {
				name string
				url  string
			}{{"one replica", single.url}, {"two replicas via HAProxy", c.url}} {
				var rps float64
				if w.f == nil {
					rps = rawThroughput(t, target.url, 8, w.n)
				} else {
					rps = throughput(t, target.url, 8, w.n, w.f)
				}
				t.Logf("%s, %s (round %d): %.0f requests/s", w.name, target.name, round, rps)
			}
		}
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// throughput runs n requests of f from conc clients on url and returns
// requests per second.
func throughput(t *testing.T, url string, conc, n int, f func(*mcp.ClientSession) error) float64 {
	t.Helper()
	ctx := context.Background()
	clients := make([]*mcp.ClientSession, conc)
	for i := range clients {
		clients[i] = client(t, ctx, url)
	}
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	start := time.Now()
	for _, cs := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := f(cs); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

// rawThroughput posts n 2026-07-28 tools/list requests from conc
// goroutines (raw HTTP: the go-sdk client would answer from its cache, the
// result being cacheable) and returns requests per second.
func rawThroughput(t *testing.T, url string, conc, n int) float64 {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", "tools/list")
				resp, err := hc.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "run_code") {
					t.Errorf("tools/list: %d %.200s", resp.StatusCode, b)
					return
				}
			}
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}
