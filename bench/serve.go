package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is a `sandcall serve` the bench started, in a temporary directory
// of its own (no sandcall.yaml, tools or servers of the caller's).
type server struct {
	cmd *exec.Cmd
	dir string
	url string // over HTTP; "" over stdio
	// cs is the stdio client's session; nil over HTTP.
	cs *mcp.ClientSession
}

// noRateLimit is the load workload's sandcall.yaml: the transport rate
// limit off, since ten clients sending runs back to back measure the
// server, not the default limit of 50 requests a second for one principal
// (all local clients are one principal) which they pass within a second.
const noRateLimit = "version: 1\nhttp:\n  rate_limit:\n    per_second: -1\n"

// startHTTP starts `sandcall serve --demo --http 127.0.0.1:0 args...` with
// config as its sandcall.yaml ("": none, the defaults) and waits for the URL
// it prints.
func startHTTP(ctx context.Context, exe, config string, args ...string) (*server, error) {
	dir, err := os.MkdirTemp("", "sandcall-bench-serve-")
	if err != nil {
		return nil, err
	}
	cmdArgs := []string{"serve", "--demo", "--http", "127.0.0.1:0"}
	if config != "" {
		cfg := filepath.Join(dir, "sandcall.yaml")
		if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		cmdArgs = append(cmdArgs, "--config", cfg)
	}
	s := &server{dir: dir}
	s.cmd = exec.CommandContext(ctx, exe, append(cmdArgs, args...)...)
	s.cmd.Dir = dir
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	urlc := make(chan string, 1)
	exited := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`listening on (http://\S+/mcp)`)
		sc := bufio.NewScanner(stderr)
		var first string
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			} else if first == "" {
				first = sc.Text()
			}
		}
		exited <- first
	}()
	select {
	case s.url = <-urlc:
		return s, nil
	case line := <-exited:
		s.close()
		return nil, fmt.Errorf("the server exited before listening: %s", line)
	case <-time.After(30 * time.Second):
		s.close()
		return nil, errors.New("the server did not start listening within 30 s")
	}
}

// startStdio starts `sandcall serve --demo args...` over stdio and connects
// an MCP client to it, as an agent's client would (initialize, then a list
// of the tools).
func startStdio(ctx context.Context, exe string, args ...string) (*server, error) {
	dir, err := os.MkdirTemp("", "sandcall-bench-serve-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir}
	s.cmd = exec.Command(exe, append([]string{"serve", "--demo"}, args...)...)
	s.cmd.Dir = dir
	s.cs, err = mcp.NewClient(&mcp.Implementation{Name: "sandcall-bench", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: s.cmd}, nil)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if _, err := s.cs.ListTools(ctx, nil); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// client connects an MCP client to an HTTP server.
func (s *server) client(ctx context.Context) (*mcp.ClientSession, error) {
	return mcp.NewClient(&mcp.Implementation{Name: "sandcall-bench", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1}, nil)
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// close stops the server and removes its directory.
func (s *server) close() {
	if s.cs != nil {
		_ = s.cs.Close() // closes its stdin, then waits for it to exit
	} else {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		_ = s.cmd.Wait()
	}
	os.RemoveAll(s.dir)
}

// runCode calls run_code with code and checks that the result is want
// (compact JSON).
func runCode(ctx context.Context, cs *mcp.ClientSession, code string, input any, want string) error {
	args := map[string]any{"code": code}
	if input != nil {
		args["input"] = input
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil {
		return err
	}
	var out struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  *struct{ Code, Message string }
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &out)
	if !out.OK || !jsonEqual(out.Result, []byte(want)) {
		if out.Error != nil {
			return fmt.Errorf("run: %s: %s", out.Error.Code, out.Error.Message)
		}
		return fmt.Errorf("run: wrong result %.60s", out.Result)
	}
	return nil
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
