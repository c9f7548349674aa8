package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/internal/testenv"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// npmServersVersion pins the reference MCP servers the upstream tests
// install from npm.
const npmServersVersion = "2026.8.31"

// installNPMServers installs @modelcontextprotocol/server-memory and
// server-everything once into a temp dir keyed by version and returns its
// node_modules/.bin.
func installNPMServers(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped with -short: installs MCP servers from npm")
	}
	if runtime.GOOS != "linux" {
		t.Skip("skipped: the process checks read /proc")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("skipped: node is not installed (needed to run the npm MCP servers)")
	}
	dir := filepath.Join(os.TempDir(), "sandcall-npm-servers-"+npmServersVersion)
	pkgs := []string{"server-memory", "server-everything"}
	var args []string
	for _, p := range pkgs {
		args = append(args, "@modelcontextprotocol/"+p+"@"+npmServersVersion)
	}
	testenv.NPMInstall(t, dir, func() bool {
		for _, p := range pkgs {
			if installedVersion(filepath.Join(dir, "node_modules", "@modelcontextprotocol", p, "package.json")) != npmServersVersion {
				return false
			}
		}
		return true
	}, args...)
	return filepath.Join(dir, "node_modules", ".bin")
}

// markEnv names the variable each test upstream gets in its env: every
// process an upstream starts inherits it, so /proc finds them all, however
// they were re-parented.
const markEnv = "SANDCALL_TEST_MARK"

// marked returns the live (not zombie) processes whose environment holds
// markEnv=mark.
func marked(mark string) []int {
	want := []byte(markEnv + "=" + mark + "\x00")
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		if procState(pid) == 'Z' {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// procState is the state letter of /proc/PID/stat, or 0 if gone.
func procState(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// parentOf is the parent PID from /proc/PID/stat, or 0.
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	p, _ := strconv.Atoi(f[1])
	return p
}

// waitFor polls cond every 50ms until it holds or bound passes.
func waitFor(bound time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// hungProject writes a project whose .mcp.json names the npm memory server
// and a server that never answers (testdata/hung_upstream.sh, with a dial
// timeout far beyond the test's bounds), each marked with mark.
func hungProject(t *testing.T, bins, mark string) string {
	t.Helper()
	dir := t.TempDir()
	hung, err := filepath.Abs(filepath.Join("testdata", "hung_upstream.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"memory": map[string]any{"command": filepath.Join(bins, "mcp-server-memory"),
			"env": map[string]any{markEnv: mark, "MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
		"hung": map[string]any{"command": "sh", "args": []string{hung}, "timeout": "10m",
			"env": map[string]any{markEnv: mark}},
	}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // whatever a failed test left behind
		for _, pid := range marked(mark) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return dir
}

// startServe starts `sandcall serve --isolation inprocess` in dir and
// returns it with a channel closed when it has exited.
func startServe(t *testing.T, dir string) (*exec.Cmd, <-chan struct{}, *sandboxtest.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--trust-project", "--isolation", "inprocess")
	cmd.Dir = dir
	stderr := new(sandboxtest.Buffer)
	cmd.Stderr = stderr
	return cmd, nil, stderr
}

// connect starts cmd and connects a go-sdk client over its stdio; exited
// is closed when cmd has exited.
func connect(t *testing.T, ctx context.Context, cmd *exec.Cmd) (cs *mcp.ClientSession, exited <-chan struct{}) {
	t.Helper()
	cs, exited, _ = connectWatch(t, ctx, cmd)
	return cs, exited
}

// connectWatch is connect with a client told of
// notifications/tools/list_changed: changed receives one (coalesced) per
// notification. The session speaks 2025-11-25: a 2026-07-28 go-sdk client
// serves tools/list from its cache for the server's ttl (60 s), and a
// notification that lands while a tools/list is in flight is followed by
// that (stale) answer being cached: the tool would show only after the
// ttl. So a test waiting for a tool lists afresh on each notification.
func connectWatch(t *testing.T, ctx context.Context, cmd *exec.Cmd) (cs *mcp.ClientSession, exited <-chan struct{}, changed <-chan struct{}) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	ch := make(chan struct{}, 1)
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case ch <- struct{}{}:
			default:
			}
		},
	}).Connect(ctx, &mcp.IOTransport{Reader: out, Writer: in}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs, done, ch
}

// waitTool waits until tools/list names name, listing again on each
// notifications/tools/list_changed; false if bound passes first (a hang
// guard, not a timing).
func waitTool(t *testing.T, ctx context.Context, cs *mcp.ClientSession, changed <-chan struct{}, name string, bound time.Duration) bool {
	t.Helper()
	timeout := time.After(bound)
	for {
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(lt.Tools, func(tl *mcp.Tool) bool { return tl.Name == name }) {
			return true
		}
		select {
		case <-changed:
		case <-timeout:
			return false
		}
	}
}

// assertAllGone checks that sandcall exits within bound of exited and that
// no marked process is left.
func assertAllGone(t *testing.T, exited <-chan struct{}, mark string, stderr *sandboxtest.Buffer) {
	t.Helper()
	t0 := time.Now()
	defer func() { t.Logf("sandcall and its upstreams gone %v after the signal", time.Since(t0)) }()
	select {
	case <-exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("sandcall still runs 2 minutes after SIGTERM\nstderr: %s", stderr.String())
	}
	if !waitFor(time.Minute, func() bool { return len(marked(mark)) == 0 }) {
		t.Fatalf("upstream processes left behind: %v\nstderr: %s", marked(mark), stderr.String())
	}
}

// TestServeHungUpstream: with an upstream that never answers beside the
// healthy npm memory server, `serve` answers initialize without waiting
// for either, lists the memory server's tools as soon as it is up, and on
// SIGTERM exits with every upstream process (the hung one's child too).
func TestServeHungUpstream(t *testing.T) {
	t.Parallel()
	bins := installNPMServers(t)
	mark := fmt.Sprintf("hung-%d-%d", os.Getpid(), time.Now().UnixNano())
	dir := hungProject(t, bins, mark)
	cmd, _, stderr := startServe(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	cs, exited, changed := connectWatch(t, ctx, cmd)
	// The hung server's dial timeout is 10 minutes: before background
	// attach, initialize waited for it.
	t.Logf("initialize answered after %v", time.Since(t0))
	if time.Since(t0) > time.Minute {
		t.Fatalf("initialize took %v: it waited for the hung upstream", time.Since(t0))
	}
	if !waitTool(t, ctx, cs, changed, "memory_read_graph", 90*time.Second) {
		t.Fatalf("memory_read_graph not listed\nstderr: %s", stderr.String())
	}
	t.Logf("memory tools listed after %v", time.Since(t0))
	// The hung server's child is up too: SIGTERM must take it down.
	if !waitFor(time.Minute, func() bool { return len(marked(mark)) >= 3 }) {
		t.Fatalf("want the memory server, the hung server and its child; marked: %v", marked(mark))
	}
	t1 := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"code": `const g = await tools.memory_read_graph({}); return Object.keys(g).sort();`}})
	if err != nil || res.IsError {
		t.Fatalf("run_code: %v %+v", err, res)
	}
	t.Logf("run_code took %v", time.Since(t1))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	assertAllGone(t, exited, mark, stderr)
}

// TestServeSIGTERMAnyMoment sends SIGTERM at the moments where it used to
// be lost or leave children: while the upstreams are being dialled before
// any client spoke, and right after initialize.
func TestServeSIGTERMAnyMoment(t *testing.T) {
	t.Parallel()
	bins := installNPMServers(t)
	for _, moment := range []string{"during-dial", "after-initialize"} {
		t.Run(moment, func(t *testing.T) {
			mark := fmt.Sprintf("term-%s-%d-%d", moment, os.Getpid(), time.Now().UnixNano())
			dir := hungProject(t, bins, mark)
			cmd, _, stderr := startServe(t, dir)
			var exited <-chan struct{}
			if moment == "during-dial" {
				in, err := cmd.StdinPipe() // held open: no EOF ends serve
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan struct{})
				go func() { _ = cmd.Wait(); close(done) }()
				t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
				exited = done
				// Both servers started (the hung one has its child): the
				// dials are in progress.
				if !waitFor(time.Minute, func() bool { return len(marked(mark)) >= 3 }) {
					t.Fatalf("upstreams not started; marked: %v\nstderr: %s", marked(mark), stderr.String())
				}
			} else {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				_, exited = connect(t, ctx, cmd)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			assertAllGone(t, exited, mark, stderr)
		})
	}
}

// TestUpstreamDiesWithSandcall kills sandcall outright (SIGKILL: nothing of
// it runs): the parent-death signal takes its upstream servers with it.
func TestUpstreamDiesWithSandcall(t *testing.T) {
	t.Parallel()
	bins := installNPMServers(t)
	mark := fmt.Sprintf("kill-%d-%d", os.Getpid(), time.Now().UnixNano())
	dir := hungProject(t, bins, mark)
	cmd, _, stderr := startServe(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, exited := connect(t, ctx, cmd)
	var children []int
	if !waitFor(time.Minute, func() bool {
		children = children[:0]
		for _, pid := range marked(mark) {
			if parentOf(pid) == cmd.Process.Pid {
				children = append(children, pid)
			}
		}
		return len(children) == 2
	}) {
		t.Fatalf("want sandcall's two upstream children; marked %v\nstderr: %s", marked(mark), stderr.String())
	}
	_ = cmd.Process.Kill()
	<-exited
	if !waitFor(time.Minute, func() bool {
		for _, pid := range children {
			if s := procState(pid); s != 0 && s != 'Z' {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("upstream children %v outlived a killed sandcall", children)
	}
}

// TestRunStartsOnlyNamedServers configures four upstreams (the npm memory
// and everything servers, a hung one, one that does not exist) and runs a
// program that uses the memory server: only that one is started, and the
// run does not wait on the others.
func TestRunStartsOnlyNamedServers(t *testing.T) {
	t.Parallel()
	bins := installNPMServers(t)
	dir := t.TempDir()
	hung, _ := filepath.Abs(filepath.Join("testdata", "hung_upstream.sh"))
	mark := fmt.Sprintf("run-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		for _, pid := range marked(mark) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	// Each server's command first leaves a file named after it.
	wrap := func(name string, cmd ...string) map[string]any {
		return map[string]any{"command": "sh", "timeout": "10m",
			"args": append([]string{"-c", `: > "$0"; exec "$@"`, filepath.Join(dir, "started."+name)}, cmd...),
			"env":  map[string]any{markEnv: mark, "MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}}
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"memory":     wrap("memory", filepath.Join(bins, "mcp-server-memory")),
		"everything": wrap("everything", filepath.Join(bins, "mcp-server-everything")),
		"hung":       wrap("hung", "sh", hung),
		"missing":    wrap("missing", filepath.Join(dir, "no-such-server")),
	}}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	out := runProgramIn(t, dir, `const g = await tools.memory_read_graph({}); return g.entities.length;`)
	t.Logf("sandcall run took %v", time.Since(t0))
	if strings.TrimSpace(string(out)) != "0" {
		t.Fatalf("sandcall run: %s", out)
	}
	for name, want := range map[string]bool{"memory": true, "everything": false, "hung": false, "missing": false} {
		_, err := os.Stat(filepath.Join(dir, "started."+name))
		if got := err == nil; got != want {
			t.Errorf("server %s started: %v, want %v", name, got, want)
		}
	}
	if !waitFor(time.Minute, func() bool { return len(marked(mark)) == 0 }) {
		t.Errorf("processes left after run: %v", marked(mark))
	}
}

// TestServeSkipsItself: in the Claude Code layout the project's .mcp.json
// lists sandcall itself (by its path, or as `go run ./cmd/sandcall serve`)
// beside its upstreams. sandcall skips itself with a notice; with
// --mcp-config it reads only its own file, so a server listed only in the
// client's file is not started.
func TestServeSkipsItself(t *testing.T) {
	t.Parallel()
	bins := installNPMServers(t)
	mark := fmt.Sprintf("self-%d-%d", os.Getpid(), time.Now().UnixNano())
	dir := hungProject(t, bins, mark) // memory and hung, in .mcp.json
	clientOnly := mark + "-client"
	t.Cleanup(func() {
		for _, pid := range marked(clientOnly) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	shared := map[string]any{"mcpServers": map[string]any{
		"sandcall": map[string]any{"command": bin, "args": []string{"serve"}},
		"dev":      map[string]any{"command": "go", "args": []string{"run", "./cmd/sandcall", "serve"}},
		"hung":     map[string]any{"command": "sh", "args": []string{"-c", "sleep 1000"}, "timeout": "2s", "env": map[string]any{markEnv: clientOnly}},
	}}
	b, _ := json.Marshal(shared)
	own, _ := os.ReadFile(filepath.Join(dir, ".mcp.json"))
	if err := os.MkdirAll(filepath.Join(dir, ".sandcall"), 0o700); err != nil {
		t.Fatal(err)
	}
	var ownCfg map[string]map[string]any
	_ = json.Unmarshal(own, &ownCfg)
	delete(ownCfg["mcpServers"], "hung")
	ob, _ := json.Marshal(ownCfg)
	if err := os.WriteFile(filepath.Join(dir, ".sandcall", "mcp.json"), ob, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	// tools list reads the shared file: itself skipped, with a notice.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc := exec.CommandContext(ctx, bin, "tools", "list")
	lc.Dir = dir
	out, _ := lc.CombinedOutput()
	for _, want := range []string{`server "sandcall" (.mcp.json) is sandcall itself; skipped`, `server "dev" (.mcp.json) is sandcall itself; skipped`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("tools list does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "sandcall_run_code") || strings.Contains(string(out), "dev_run_code") {
		t.Errorf("sandcall listed its own tools:\n%s", out)
	}
	if !waitFor(time.Minute, func() bool { return len(marked(clientOnly)) == 0 }) {
		t.Errorf("tools list left the client-only server running: %v", marked(clientOnly))
	}

	// serve --mcp-config: only sandcall's own file.
	cmd := exec.Command(bin, "serve", "--trust-project", "--isolation", "inprocess", "--mcp-config", ".sandcall/mcp.json")
	cmd.Dir = dir
	stderr := new(sandboxtest.Buffer)
	cmd.Stderr = stderr
	cs, exited, changed := connectWatch(t, ctx, cmd)
	if !waitTool(t, ctx, cs, changed, "memory_read_graph", 90*time.Second) {
		t.Fatalf("memory_read_graph not listed\nstderr: %s", stderr.String())
	}
	if left := marked(clientOnly); len(left) > 0 {
		t.Errorf("a server of the client's file was started: %v", left)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	assertAllGone(t, exited, mark, stderr)
}
