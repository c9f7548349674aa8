package local

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// writeScript writes an executable script with a header to dir.
func writeScript(t *testing.T, dir, name, body string) {
	t.Helper()
	src := "#!/bin/sh\n# @description Test tool " + name + ".\n# @param *s string a string\n# @param n integer a number\n# @param o object an object\n" + body + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
}

// loadOne loads dir and returns the named tool, in a catalog (so its
// arguments are validated).
func loadOne(t *testing.T, cfg Config, name string) *tools.Tool {
	t.Helper()
	s, fs := Load(cfg)
	for _, f := range fs {
		if f.Reason != "" {
			t.Fatalf("finding: %s", f)
		}
	}
	cat, _ := tools.NewCatalog()
	if fs := s.AddTo(cat); len(fs) > 0 {
		t.Fatalf("AddTo: %v", fs)
	}
	tool, ok := cat.Lookup(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tool
}

func call(t *testing.T, tool *tools.Tool, args string) (string, error) {
	t.Helper()
	res, err := tool.Call(context.Background(), json.RawMessage(args))
	return string(res), err
}

func TestCall(t *testing.T) {
	t.Setenv("SANDCALL_TEST_CANARY", "canary-secret-value")
	dir, root := t.TempDir(), t.TempDir()
	writeScript(t, dir, "stdin_json", `cat`)
	writeScript(t, dir, "env_vars", `printf '{"s":"%s","n":%s,"o":%s,"octo":"%s","tool":"%s","wd":"%s","pwd":"%s"}' "$SANDCALL_PARAM_S" "$SANDCALL_PARAM_N" "$SANDCALL_PARAM_O" "$OCTOMIND_PARAM_S" "$SANDCALL_TOOL_NAME" "$SANDCALL_WORKDIR" "$(pwd)"`)
	writeScript(t, dir, "text_out", `echo "plain text"`)
	writeScript(t, dir, "with_stderr", `echo '{"a":1}'; echo warning >&2`)
	writeScript(t, dir, "fails", `echo partial; echo "bad input" >&2; exit 3`)
	writeScript(t, dir, "canary", `env`)
	writeScript(t, dir, "flood", `yes`)
	cfg := Config{Dir: dir, Root: root}
	s, _ := Load(cfg)
	cat, _ := tools.NewCatalog()
	if fs := s.AddTo(cat); len(fs) > 0 {
		t.Fatal(fs)
	}
	get := func(name string) *tools.Tool { tool, _ := cat.Lookup(name); return tool }

	if got, err := call(t, get("stdin_json"), `{"s":"x","n":2}`); err != nil || got != `{"s":"x","n":2}` {
		t.Errorf("stdin_json = %s, %v", got, err)
	}
	got, err := call(t, get("env_vars"), `{"s":"hello world","n":7,"o":{"k":[1,2]}}`)
	want := `{"s":"hello world","n":7,"o":{"k":[1,2]},"octo":"hello world","tool":"env_vars","wd":"` + root + `","pwd":"` + root + `"}`
	if err != nil || got != want {
		t.Errorf("env_vars = %s, %v\nwant %s", got, err, want)
	}
	if got, err := call(t, get("text_out"), `{"s":""}`); err != nil || got != `"plain text"` {
		t.Errorf("text_out = %s, %v", got, err)
	}
	if got, err := call(t, get("with_stderr"), `{"s":""}`); err != nil || got != `"{\"a\":1}\n[stderr]\nwarning"` {
		t.Errorf("with_stderr = %s, %v", got, err)
	}
	_, err = call(t, get("fails"), `{"s":""}`)
	var se *sandbox.Error
	if !errors.As(err, &se) || se.Code != sandbox.EToolFailed || !strings.Contains(se.Message, "code 3") || !strings.Contains(se.Message, "bad input") {
		t.Errorf("fails: %v", err)
	}
	got, err = call(t, get("canary"), `{"s":""}`)
	if err != nil || strings.Contains(got, "canary-secret-value") || strings.Contains(got, "SANDCALL_TEST_CANARY") {
		t.Errorf("canary leaked or failed: %v\n%s", err, got)
	}
	if !strings.Contains(got, "PATH=") {
		t.Errorf("PATH missing: %s", got)
	}
	_, err = call(t, get("flood"), `{"s":""}`)
	if !errors.Is(err, sandbox.ErrOutputLimit) {
		t.Errorf("flood: %v", err)
	}
	if _, err := call(t, get("stdin_json"), `{"n":1}`); !errors.Is(err, sandbox.ErrToolArgs) {
		t.Errorf("missing required: %v", err)
	}
	if _, err := call(t, get("stdin_json"), `{"s":"","zzz":1}`); !errors.Is(err, sandbox.ErrToolArgs) {
		t.Errorf("unknown argument: %v", err)
	}
}

// gone waits for the process whose PID is in file to disappear.
func gone(t *testing.T, file string) {
	t.Helper()
	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(file)
		if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && p > 0 {
			pid = p
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatal("the script never wrote its child's PID")
	}
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) || zombie(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("background child %d still alive", pid)
}

func TestCancelKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	writeScript(t, dir, "spawner", `sleep 100 & echo $! > `+pidFile+`; wait`)
	tool := loadOne(t, Config{Dir: dir}, "spawner")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := tool.Call(ctx, json.RawMessage(`{"s":""}`)); errc <- err }()
	for {
		if b, _ := os.ReadFile(pidFile); len(b) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, sandbox.ErrCancelled) {
			t.Errorf("err = %v, want E_CANCELLED", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return after cancellation")
	}
	gone(t, pidFile)
}

func TestTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	writeScript(t, dir, "slow", `sleep 100 & echo $! > `+pidFile+`; wait`)
	tool := loadOne(t, Config{Dir: dir, Timeout: 300 * time.Millisecond}, "slow")
	_, err := tool.Call(context.Background(), json.RawMessage(`{"s":""}`))
	var se *sandbox.Error
	if !errors.As(err, &se) || se.Code != sandbox.EToolFailed || !se.Retryable || !strings.Contains(se.Message, "did not finish") {
		t.Errorf("err = %#v", err)
	}
	gone(t, pidFile)
}

func TestExitKillsLeftovers(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	writeScript(t, dir, "leaver", `sleep 100 >/dev/null 2>&1 & echo $! > `+pidFile+`; echo '"done"'`)
	tool := loadOne(t, Config{Dir: dir}, "leaver")
	if got, err := call(t, tool, `{"s":""}`); err != nil || got != `"done"` {
		t.Errorf("leaver = %s, %v", got, err)
	}
	gone(t, pidFile)
}

// zombie reports whether pid has exited and waits to be reaped (by a PID 1
// that may take its time in a container).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}
