package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/internal/testenv"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// TestCallWaitsForStartingServer: a program calling a tool of a server
// that is still starting (here it waits on a FIFO the test controls, as a
// slow npx download would) is not told the tool does not exist: the call
// waits, in flight, until the server is up, then runs.
func TestCallWaitsForStartingServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate.fifo")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	def := map[string]any{"command": "sh", "args": []string{"-c", "read x < gate.fifo; exec " + demoBin + " serve --demo --isolation inprocess"}, "timeout": "2m"}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"slow": def}})
	writeFile(t, dir, ".mcp.json", string(cfg))

	cmd := exec.Command(bin, "serve", "--trust-project", "--isolation", "inprocess")
	cmd.Dir = dir
	stderr := new(sandboxtest.Buffer)
	cmd.Stderr = stderr
	progress := make(chan string, 64)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			select {
			case progress <- r.Params.Message:
			default:
			}
		}})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close(); kill(cmd) })

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `return await tools.slow_ping({n: 1})`},
			Meta: mcp.Meta{"progressToken": "p1"}})
		done <- outcome{res, err}
	}()
	// The call is in flight while the server is still held at its gate.
	for waiting := false; !waiting; {
		select {
		case m := <-progress:
			waiting = strings.Contains(m, "1 in flight")
		case o := <-done:
			t.Fatalf("the call ended while its server was starting: %v %+v\n%s", o.err, o.res, stderr.String())
		case <-ctx.Done():
			t.Fatalf("no progress with the call in flight\n%s", stderr.String())
		}
	}
	writeFIFO(t, gate) // the server may start now
	o := <-done
	if o.err != nil || o.res.IsError {
		t.Fatalf("call: %v %+v\n%s", o.err, o.res, stderr.String())
	}
	b, _ := json.Marshal(o.res.StructuredContent)
	if !strings.Contains(string(b), `"ok":true`) || !strings.Contains(string(b), `"result":2`) {
		t.Errorf("result %s", b)
	}
}

// TestMissingCommandNamesTheCause: with npx not on PATH, a call to the
// server's tool says so (not "no tool named …"), and tools list and
// search_tools say the server failed and why.
func TestMissingCommandNamesTheCause(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, ".mcp.json", `{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`)
	writeFile(t, dir, "p.js", `try { return await tools.memory_read_graph({}) } catch (e) { return e.code + ": " + e.message }`)
	noNPX := []string{"PATH=" + t.TempDir()} // an empty directory: no npx, no node
	out, errOut, code := sandcallIn(t, dir, noNPX, "run", "--trust-project", "--isolation", "inprocess", "--json", "p.js")
	var res struct {
		Result string `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("run: exit %d: %v\n%s%s", code, err, out, errOut)
	}
	if !strings.HasPrefix(res.Result, "E_TOOL_FAILED: ") || !strings.Contains(res.Result, `server "memory" (.mcp.json) failed to start: the command "npx" was not found on PATH`) {
		t.Errorf("call of a server whose command is missing: %q", res.Result)
	}
	out, errOut, _ = sandcallIn(t, dir, noNPX, "tools", "list", "--trust-project")
	if !strings.Contains(out, "memory_*") || !strings.Contains(out, `server failed to start: the command "npx" was not found on PATH`) {
		t.Errorf("tools list does not say the server failed and why:\n%s%s", out, errOut)
	}
	out, errOut, _ = sandcallIn(t, dir, noNPX, "tools", "search", "--trust-project", "--json", "read the knowledge graph")
	if !strings.Contains(out, `Not searched: server \"memory\" (.mcp.json) failed to start`) {
		t.Errorf("search_tools' hint does not name the failed server:\n%s%s", out, errOut)
	}
}

// TestInspectorOneShot: the MCP Inspector's CLI, a one-shot client (it
// starts the server, initializes, lists the tools, calls one and exits),
// reaches an upstream tool of sandcall: tools/list waits for the servers
// still starting.
func TestInspectorOneShot(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipped with -short: installs the MCP Inspector from npm")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("skipped: node is not installed (the Inspector runs on it)")
	}
	const version = "2.12.0"
	npmDir := filepath.Join(os.TempDir(), "sandcall-npm-inspector-"+version)
	testenv.NPMInstall(t, npmDir, func() bool {
		return installedVersion(filepath.Join(npmDir, "node_modules", "@modelcontextprotocol", "inspector", "package.json")) == version
	}, "@modelcontextprotocol/inspector@"+version)
	inspector := filepath.Join(npmDir, "node_modules", ".bin", "inspector")

	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"command": demoBin, "args": []string{"serve", "--demo", "--isolation", "inprocess"}}}})
	writeFile(t, dir, ".mcp.json", string(cfg))
	if out, errOut, code := sandcallIn(t, dir, nil, "servers", "trust"); code != 0 {
		t.Fatalf("servers trust: exit %d\n%s%s", code, out, errOut)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The Inspector starts the server with a minimal environment: the
	// trust records' directory is passed on as a client's config would.
	cmd := exec.CommandContext(ctx, inspector, "--cli", "-e", "XDG_STATE_HOME="+os.Getenv("XDG_STATE_HOME"), bin, "serve", "--isolation", "inprocess",
		"--method", "tools/call", "--tool-name", "demo_ping", "--tool-arg", "n=41")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"result": 42`) {
		t.Errorf("inspector --cli tools/call demo_ping: %v\n%s", err, out)
	}
}
