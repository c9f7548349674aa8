package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProjectFilesThatAreNotFiles: a repository prepared so that what
// sandcall reads never ends — .mcp.json, sandcall.yaml, the trust file,
// the pin file, a script or the policy as a link to /dev/zero, or a FIFO
// nobody writes — costs an error (or a warning naming the file), never a
// hang or a memory blow-up. Each command must end well before a generous
// bound (30 s); the bound only catches a hang, it times nothing.
func TestProjectFilesThatAreNotFiles(t *testing.T) {
	t.Parallel()
	fifo := func(dir, name string) {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
	}
	zero := func(dir, name string) {
		if err := os.Symlink("/dev/zero", filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name      string
		make      func(dir string)
		want      string // in the output of tools list (and of the other commands, unless toolsOnly)
		toolsOnly bool
	}{
		{".mcp.json to /dev/zero", func(d string) { zero(d, ".mcp.json") }, ".mcp.json: a symbolic link leading outside the project: not read", false},
		{".mcp.json FIFO", func(d string) { fifo(d, ".mcp.json") }, ".mcp.json: not a regular file", false},
		{"sandcall.yaml to /dev/zero", func(d string) { zero(d, "sandcall.yaml") }, "sandcall.yaml: a symbolic link leading outside the project", false},
		{"sandcall.yaml FIFO", func(d string) { fifo(d, "sandcall.yaml") }, "sandcall.yaml: not a regular file", false},
		{"trust file to /dev/zero", func(d string) { mkdir(t, d, ".sandcall"); zero(d, ".sandcall/trust.json") }, ".sandcall/trust.json in the project is ignored", false},
		{"pin file to /dev/zero", func(d string) { mkdir(t, d, ".sandcall"); zero(d, ".sandcall/pins.json") }, "pins.json: not a regular file", true},
		{"pin file FIFO", func(d string) { mkdir(t, d, ".sandcall"); fifo(d, ".sandcall/pins.json") }, "pins.json: not a regular file", true},
		{"policy FIFO", func(d string) { fifo(d, "p.yaml"); writeFile(t, d, "sandcall.yaml", "version: 1\npolicy: p.yaml\n") }, "p.yaml: not a regular file", false},
		{"policy outside", func(d string) { writeFile(t, d, "sandcall.yaml", "version: 1\npolicy: /etc/passwd\n") }, "policy /etc/passwd: a link leading outside the project", false},
		{"script to /dev/zero", func(d string) { mkdir(t, d, ".agents/tools"); zero(d, ".agents/tools/zero") }, "skipped: not a regular file", true},
		{"envFile FIFO", func(d string) {
			fifo(d, "env.fifo")
			writeFile(t, d, ".mcp.json", `{"mcpServers": {"x": {"command": "true", "envFile": "env.fifo"}}}`)
		}, "env.fifo: not a regular file", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tc.make(dir)
			for _, args := range [][]string{{"tools", "list"}, {"servers", "list"}, {"run", "--isolation", "inprocess", "-"}} {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				cmd := exec.CommandContext(ctx, bin, args...)
				cmd.Dir = dir
				cmd.Stdin = strings.NewReader("return 1")
				out, _ := cmd.CombinedOutput()
				if ctx.Err() != nil {
					t.Errorf("%v did not end within 30 s (killed)\n%s", args, out)
				}
				cancel()
				if (args[0] == "tools" || !tc.toolsOnly) && !strings.Contains(string(out), tc.want) {
					t.Errorf("%v: no %q in\n%s", args, tc.want, out)
				}
			}
		})
	}
}

func mkdir(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestSignalEndsServe: SIGTERM ends `sandcall serve` in a project whatever
// it reads, and a second signal ends it at once.
func TestSignalEndsServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, ".mcp.json", `{"mcpServers": {"slow": {"command": "sh", "args": ["-c", "sleep 600"], "timeout": "10m"}}}`)
	cmd := exec.Command(bin, "serve", "--trust-project", "--isolation", "inprocess")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer kill(cmd)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
			t.Error("serve needed a second SIGTERM")
		case <-time.After(30 * time.Second):
			t.Fatal("serve ignored two SIGTERMs")
		}
	}
}
