package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// TestServeListChanged adds a script to .agents/tools while a client is
// connected to `sandcall serve` over stdio: the client gets
// notifications/tools/list_changed and the new tool is listed.
func TestServeListChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".agents/tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	changed, has, stderr := watchServe(t, dir)
	if has("hello") {
		t.Fatal("hello listed before the script exists")
	}
	script := "#!/bin/sh\n# @description Says hello to a name.\n# @param *name string who to greet\nprintf '\"hello %s\"' \"$SANDCALL_PARAM_NAME\"\n"
	if err := os.WriteFile(filepath.Join(dir, ".agents/tools/hello"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(time.Minute) // a hang guard
	// The server must notify; each notification is a reason to list
	// again, until the list shows the change: no polling on a clock.
	select {
	case <-changed:
	case <-timeout:
		t.Fatalf("no notifications/tools/list_changed a minute after the script was written\nstderr: %s", stderr.String())
	}
	for !has("hello") {
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("hello not listed a minute after the script was written\nstderr: %s", stderr.String())
		}
	}
}

// TestServePolicyReloadListChanged rewrites the policy file while a client
// is connected: the tool the new policy makes code-only leaves tools/list,
// and the client is told with notifications/tools/list_changed.
func TestServePolicyReloadListChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte("version: 1\nrules: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, has, stderr := watchServe(t, dir, "--policy", pol)
	if !has("ping") {
		t.Fatal("ping not listed under an empty policy")
	}
	next := "version: 1\nrules:\n  - name: ping-from-code\n    tools: [ping]\n    allowed_callers: [code]\n"
	if err := os.WriteFile(pol, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(time.Minute) // a hang guard
	// The server must notify; each notification is a reason to list
	// again, until the list shows the change: no polling on a clock.
	select {
	case <-changed:
	case <-timeout:
		t.Fatalf("no notifications/tools/list_changed a minute after the policy change\nstderr: %s", stderr.String())
	}
	for has("ping") {
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("ping still listed a minute after the policy made it code-only\nstderr: %s", stderr.String())
		}
	}
}

// watchServe starts `sandcall serve --demo --isolation inprocess args...` in
// dir with a connected go-sdk client: changed receives the client's
// notifications/tools/list_changed, has says whether tools/list names a
// tool, and stderr is the server's.
func watchServe(t *testing.T, dir string, args ...string) (changed <-chan struct{}, has func(string) bool, stderr *sandboxtest.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--trust-project", "--demo", "--isolation", "inprocess"}, args...)...)
	cmd.Dir = dir
	stderr = new(sandboxtest.Buffer)
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	ch := make(chan struct{}, 16)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case ch <- struct{}{}:
			default:
			}
		},
	}).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	t.Cleanup(func() { kill(cmd) })
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	has = func(name string) bool {
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(lt.Tools, func(tl *mcp.Tool) bool { return tl.Name == name })
	}
	return ch, has, stderr
}
