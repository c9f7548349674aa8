package js

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandcall/sandcall/internal/testenv"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// TestRedteamSample runs the shared sample of hostile programs with the
// outcome each file's first line expects.
func TestRedteamSample(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "redteam", "js")
	paths, _ := filepath.Glob(filepath.Join(dir, "*.js"))
	if len(paths) == 0 {
		t.Skip("the shared redteam sample is not present at " + dir)
	}
	e := New(Config{})
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".js"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(data), "\n")
			expect, ok := strings.CutPrefix(first, "// expect: ")
			if !ok {
				t.Fatalf("no expect line: %q", first)
			}
			expect, _, _ = strings.Cut(expect, " ") // drop "(and the next run ...)"
			l := sandbox.DefaultLimits()
			l.Timeout = 2 * time.Second
			if testenv.Race && !strings.Contains(expect, "E_TIMEOUT") {
				l.Timeout = 20 * time.Second
			}
			job := &sandbox.Job{Program: sandbox.Program{Source: string(data)}, Limits: l, Tools: expenseTools}
			out := e.Execute(context.Background(), job, newHost())
			checkOutcome(t, out, expect, "")
			if strings.Contains(first, "next run") {
				next := &sandbox.Job{Program: sandbox.Program{Source: "return ({}).polluted === undefined"}, Limits: l}
				checkOutcome(t, e.Execute(context.Background(), next, newHost()), "ok:true", "")
			}
		})
	}
}

// TestNoGoroutineLeak runs programs that end while tool calls are in
// flight (success, error, timeout, cancel) and checks the goroutine count
// settles back.
func TestNoGoroutineLeak(t *testing.T) {
	e := New(Config{})
	// Warm up anything that starts a goroutine once (the regexp2 clock
	// stops by itself after a while; leave it out).
	before := runtime.NumGoroutine()
	l := sandbox.DefaultLimits()
	l.Timeout = 300 * time.Millisecond
	for _, src := range []string{
		`tools.slow(); tools.slow(); return 1`,
		`tools.slow(); throw new Error('x')`,
		`await Promise.all([tools.slow(), tools.slow()])`,
		`tools.slow(); for (;;) {}`,
		`const ps = []; for (let i = 0; i < 100; i++) ps.push(tools.ping({n: i})); return 1`,
	} {
		job := &sandbox.Job{Program: sandbox.Program{Source: src}, Limits: l, Tools: testTools}
		e.Execute(context.Background(), job, newHost())
	}
	// Cancelled once the call is in flight (the tool itself cancels), with
	// the default deadline: the cancellation is the only way this run ends.
	ctx, cancel := context.WithCancel(context.Background())
	h := sandboxtest.New(map[string]sandboxtest.Func{"slow": func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	out := e.Execute(ctx, &sandbox.Job{Program: sandbox.Program{Source: `await tools.slow()`}, Limits: sandbox.DefaultLimits(), Tools: testTools}, h)
	if out.Err == nil || out.Err.Code != sandbox.ECancelled {
		t.Errorf("cancelled run: got %v, want E_CANCELLED", out.Err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d after\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

// TestParallelCalls checks that calls in Promise.all are in flight together.
func TestParallelCalls(t *testing.T) {
	h := &blockingHost{release: make(chan struct{}), want: 8}
	job := &sandbox.Job{Program: sandbox.Program{Source: `
		const rs = await Promise.all([0,1,2,3,4,5,6,7].map((n) => tools.wait({ n })))
		return rs.length`}, Limits: sandbox.DefaultLimits(), Tools: []string{"wait"}}
	out := New(Config{}).Execute(context.Background(), job, h)
	checkOutcome(t, out, "ok:8", "")
}

// blockingHost answers only once want calls are in flight at once.
type blockingHost struct {
	release chan struct{}
	want    int64
	n       atomic.Int64
}

func (h *blockingHost) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if h.n.Add(1) == h.want {
		close(h.release)
	}
	select {
	case <-h.release:
		return []byte(`1`), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	for _, tc := range []struct{ src, where string }{
		{"const a = 1\nconst b = = 2", "line 2:"},
		{"let x = ;", "line 1:9"},
		{"return {", "line 1:"},
	} {
		out := New(Config{}).Execute(context.Background(),
			&sandbox.Job{Program: sandbox.Program{Source: tc.src}, Limits: sandbox.DefaultLimits()}, newHost())
		if out.Err == nil || out.Err.Code != sandbox.ESyntax || !strings.Contains(out.Err.Message, tc.where) || out.Err.Hint == "" {
			t.Errorf("%q: got %v, want E_SYNTAX at %s with a hint", tc.src, out.Err, tc.where)
		}
	}
}

func TestGuestErrorPosition(t *testing.T) {
	src := "const a = 1\n  throw new RangeError('bad ' + a)"
	out := New(Config{}).Execute(context.Background(),
		&sandbox.Job{Program: sandbox.Program{Source: src}, Limits: sandbox.DefaultLimits()}, newHost())
	if out.Err == nil || out.Err.Code != sandbox.EGuestError || !strings.Contains(out.Err.Message, "RangeError: bad 1") ||
		!strings.Contains(out.Err.Message, "line 2:") {
		t.Fatalf("got %v", out.Err)
	}
	out = New(Config{}).Execute(context.Background(),
		&sandbox.Job{Program: sandbox.Program{Source: "throw new Error('x')"}, Limits: sandbox.DefaultLimits()}, newHost())
	if out.Err == nil || !strings.Contains(out.Err.Message, "line 1:7") {
		t.Fatalf("line 1 column not mapped to the user's source: %v", out.Err)
	}
}

func TestToolErrorPreserved(t *testing.T) {
	out := New(Config{}).Execute(context.Background(), &sandbox.Job{
		Program: sandbox.Program{Source: `await tools.get_budget_by_level({ level: "L9" })`},
		Limits:  sandbox.DefaultLimits(), Tools: expenseTools}, newHost())
	if out.Err == nil || out.Err.Code != sandbox.EToolArgs || out.Err.Hint == "" || out.Err.Path != "/level" {
		t.Fatalf("got %+v", out.Err)
	}
}

// TestProgramCache checks that the cache is bounded and that cached
// programs run in many runtimes.
func TestProgramCache(t *testing.T) {
	e := New(Config{ProgramCacheSize: 2})
	for i := 0; i < 5; i++ {
		for _, src := range []string{"return 1", "return 2", "return 3"} {
			out := e.Execute(context.Background(), &sandbox.Job{Program: sandbox.Program{Source: src}, Limits: sandbox.DefaultLimits()}, newHost())
			checkOutcome(t, out, "ok:"+src[len(src)-1:], "")
		}
	}
	if n := e.cache.Len(); n != 2 {
		t.Fatalf("cache holds %d programs, want 2", n)
	}
}

func TestNestingScan(t *testing.T) {
	for _, tc := range []struct {
		src string
		ok  bool
	}{
		{strings.Repeat("(", 600), false},
		{`"` + strings.Repeat("(", 600) + `"`, true},
		{"// " + strings.Repeat("[", 600), true},
		{"/* " + strings.Repeat("{", 600) + " */", true},
		{strings.Repeat("-", 600) + "1", false},
		{strings.Repeat("(1)", 600), true},
	} {
		if _, ok := sandbox.NestingOK(tc.src, MaxNesting); ok != tc.ok {
			t.Errorf("NestingOK(%.20q...) = %v, want %v", tc.src, ok, tc.ok)
		}
	}
}
