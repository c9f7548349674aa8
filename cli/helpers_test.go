package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// cpuHeavy is held by the tests that keep the CPU busy for long (compiling
// a 4 MB Go WebAssembly module, every bench workload, a 20 MB request under
// -race) so that they do not run at the same time as one another: the
// worker's 30 s compile budget was exceeded when three compiles shared two
// loaded cores. The other parallel tests, which mostly wait, still overlap
// them.
var cpuHeavy sync.Mutex

// heavy holds cpuHeavy until t ends.
func heavy(t *testing.T) {
	t.Helper()
	cpuHeavy.Lock()
	t.Cleanup(cpuHeavy.Unlock)
}

const summarySHA256 = "ced1ffb502f5a3b35468831e1b0cdef8f4aa4595953c23304d30e28b5555c250"

// sandcall runs the binary to completion with stdin and returns its output
// and exit code.
func sandcall(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return sandcallWithin(t, 5*time.Minute, stdin, args...)
}

// sandcallWithin is sandcall with a hang guard of d.
func sandcallWithin(t *testing.T, d time.Duration, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("sandcall %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return o.String(), e.String(), code
}

func writeProgram(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "program.js")
	if err := os.WriteFile(p, []byte(expense.Program), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkRun checks a run_code result carrying the expense program's answer.
func checkRun(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("run_code failed: %v", res.StructuredContent)
	}
	var r struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Calls  struct {
			Total int `json:"total"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &r); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(r.Result)
	if !r.OK || r.Calls.Total != 56 || hex.EncodeToString(sum[:]) != summarySHA256 {
		t.Fatalf("run = ok %v, %d calls, result %s", r.OK, r.Calls.Total, r.Result)
	}
}

// startHTTP starts `sandcall serve --http 127.0.0.1:0 args...` and returns
// the URL it prints.
func startHTTP(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	p := startListening(t, cmd)
	return p.url, cmd
}

// kill ends a child process if it still runs, and reaps it.
func kill(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Kill()
	if cmd.ProcessState == nil {
		_ = cmd.Wait()
	}
}

// stdioSession starts the binary with args (a serve command) and connects
// the go-sdk client over stdio; the session and the process end with the
// test, and ctx (2 minutes) bounds the test's calls. stderr holds the
// server's log.
func stdioSession(t *testing.T, args ...string) (ctx context.Context, cs *mcp.ClientSession, stderr *sandboxtest.Buffer) {
	t.Helper()
	return stdioSessionIn(t, "", args...)
}

// stdioSessionIn is stdioSession with the server started in dir.
func stdioSessionIn(t *testing.T, dir string, args ...string) (ctx context.Context, cs *mcp.ClientSession, stderr *sandboxtest.Buffer) {
	t.Helper()
	return stdioSessionEnv(t, dir, nil, args...)
}

// stdioSessionEnv is stdioSessionIn with the environment plus extra.
func stdioSessionEnv(t *testing.T, dir string, extra []string, args ...string) (ctx context.Context, cs *mcp.ClientSession, stderr *sandboxtest.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = testEnv(extra...)
	stderr = new(sandboxtest.Buffer)
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	t.Cleanup(func() { kill(cmd) })
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return ctx, cs, stderr
}

// writeFile writes src to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// tokenClient connects a go-sdk client to url with a bearer token.
func tokenClient(t *testing.T, ctx context.Context, url, tok string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerAuth{tok}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// runOutcome calls run_code and returns ok, the result and the error's code
// and message.
func runOutcome(t *testing.T, ctx context.Context, cs *mcp.ClientSession, args map[string]any) (ok bool, result, code, msg string) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  *struct{ Code, Message string }
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Error != nil {
		code, msg = r.Error.Code, r.Error.Message
	}
	return r.OK, string(r.Result), code, msg
}

// sandcallIn runs the binary in dir with the environment plus extra (a
// "TOKEN" of "-" removes TOKEN) and returns stdout, stderr and the exit code.
func sandcallIn(t *testing.T, dir string, extra []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = testEnv(extra...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// testEnv is the environment without TOKEN, plus extra.
func testEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TOKEN=") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// proc is one `sandcall serve --http` started by a test.
type proc struct {
	url   string // http://127.0.0.1:PORT/mcp
	base  string // http://127.0.0.1:PORT
	cmd   *exec.Cmd
	lines chan string // stderr after the listening line
}

// serveIn starts `sandcall serve --http ADDR args...` in dir (addr
// "127.0.0.1:0" for a free port) and waits for its listening line.
func serveIn(t *testing.T, dir, addr string, args ...string) *proc {
	t.Helper()
	// --trust-project: the tests' project scripts (the gate tool) run
	// without a trust step.
	cmd := exec.Command(bin, append([]string{"serve", "--http", addr, "--trust-project"}, args...)...)
	cmd.Dir = dir
	return startListening(t, cmd)
}

// startListening starts cmd (a `sandcall serve --http`), kills it when the
// test ends, and waits for its listening line; the stderr lines after it
// go to the proc's lines (dropped while nobody reads).
func startListening(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kill(cmd) })
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody reads: drop
			}
		}
		close(lines)
	}()
	re := regexp.MustCompile(`^listening on (http://(127\.0\.0\.1:[0-9]+)/mcp)$`)
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("sandcall serve exited before listening")
			}
			if m := re.FindStringSubmatch(l); m != nil {
				return &proc{url: m[1], base: "http://" + m[2], cmd: cmd, lines: lines}
			}
		case <-timeout:
			t.Fatal("no 'listening on' line")
		}
	}
}

// waitLine waits for a stderr line containing want.
func (p *proc) waitLine(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("sandcall serve exited before printing %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("no stderr line with %q", want)
		}
	}
}

// gateDir returns a project dir whose .agents/tools/gate tool says it
// started (a line into the FIFO started) and returns only once released
// (a line from the FIFO release): a call the test holds in flight without
// any timing.
func gateDir(t *testing.T) (dir string, started, release string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".agents", "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	started, release = filepath.Join(dir, "started.fifo"), filepath.Join(dir, "release.fifo")
	for _, f := range []string{started, release} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Skipf("skipped: no FIFOs here: %v", err)
		}
	}
	script := `#!/bin/sh
# @description Test gate: reports that it started, then waits to be released.
echo started > "$SANDCALL_WORKDIR/started.fifo"
read x < "$SANDCALL_WORKDIR/release.fifo"
echo 7
`
	if err := os.WriteFile(filepath.Join(dir, ".agents", "tools", "gate"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, started, release
}

// readFIFO reads one line from a FIFO (blocking until a writer opens it).
func readFIFO(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bufio.NewReader(f).ReadString('\n')
}

// writeFIFO writes one line to a FIFO (blocking until a reader opens it).
func writeFIFO(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("go\n")
}
