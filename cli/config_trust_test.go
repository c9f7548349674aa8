package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// TestProjectConfigNeedsTrust: a repository whose sandcall.yaml passes a
// secret through to an already trusted script, points tracing at a host
// of its choosing and names a store gets none of it until the person
// trusts those keys: each command warns, naming the keys and the command
// that trusts them; `servers trust` shows them; trusted, they apply; a
// changed endpoint is ignored again.
func TestProjectConfigNeedsTrust(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".agents", "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeScript(t, dir, "probe", "#!/bin/sh\n# @description Says whether the token reached it.\nprintf '\"%s\"' \"${SECRET_TOKEN:-unset}\"\n")
	if out, errOut, code := sandcallIn(t, dir, nil, "servers", "trust"); code != 0 {
		t.Fatalf("servers trust: exit %d\n%s%s", code, out, errOut)
	}
	col := newOTLPCollector(t)
	yaml := "version: 1\nlimits: {max_calls: 50}\nenv_passthrough: [SECRET_TOKEN]\ntracing: {otlp_endpoint: \"" + col.URL + "\"}\nstore: \"memory:\"\n"
	writeFile(t, dir, "sandcall.yaml", yaml)
	secret := []string{"SECRET_TOKEN=s3cr3t-canary"}

	// probe runs the script through serve, and waits for serve to exit
	// (it flushes its spans then).
	probe := func() (string, string) {
		t.Helper()
		cmd := exec.Command(bin, "serve", "--isolation", "inprocess")
		cmd.Dir, cmd.Env = dir, testEnv(secret...)
		stderr := new(sandboxtest.Buffer)
		cmd.Stderr = stderr
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr.String())
		}
		defer kill(cmd)
		ok, res, code, msg := runOutcome(t, ctx, cs, map[string]any{"code": `return await tools.probe({})`})
		if !ok {
			t.Fatalf("probe: %s %s\n%s", code, msg, stderr.String())
		}
		cs.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatalf("serve did not exit after the session closed\n%s", stderr.String())
		}
		return res, stderr.String()
	}
	res, errOut := probe()
	if res != `"unset"` {
		t.Errorf("an untrusted env_passthrough passed the secret: %s", res)
	}
	if !strings.Contains(errOut, "sandcall.yaml sets env_passthrough, store, tracing, which a project's own file may set only once trusted: ignored") ||
		!strings.Contains(errOut, "sandcall servers trust") {
		t.Errorf("no warning naming the ignored keys and the way out:\n%s", errOut)
	}
	if _, spans := col.snapshot(); len(spans) != 0 {
		t.Errorf("an untrusted tracing endpoint got %d spans", len(spans))
	}
	for _, args := range [][]string{{"tools", "list"}, {"servers", "list"}, {"policy", "explain", "--tool", "probe", "--caller", "code"}} {
		if _, errOut, _ := sandcallIn(t, dir, secret, args...); !strings.Contains(errOut, "sets env_passthrough, store, tracing") {
			t.Errorf("%v does not warn about the ignored keys:\n%s", args, errOut)
		}
	}

	out, errOut, code := sandcallIn(t, dir, nil, "servers", "trust")
	for _, want := range []string{`new      sandcall.yaml: env_passthrough: ["SECRET_TOKEN"]`, `new      sandcall.yaml: tracing: {"otlp_endpoint":"` + col.URL + `"}`,
		`new      sandcall.yaml: store: "memory:"`, "same     script .agents/tools/probe"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("servers trust: exit %d, no %q\n%s%s", code, want, out, errOut)
		}
	}
	if res, errOut = probe(); res != `"s3cr3t-canary"` || strings.Contains(errOut, "ignored") {
		t.Errorf("trusted env_passthrough: %s\n%s", res, errOut)
	}
	if _, spans := col.snapshot(); len(spans) == 0 {
		t.Error("no span reached the trusted tracing endpoint")
	}

	writeFile(t, dir, "sandcall.yaml", strings.Replace(yaml, col.URL, "http://127.0.0.1:9", 1))
	if res, errOut = probe(); res != `"unset"` || !strings.Contains(errOut, "sets env_passthrough, store, tracing") {
		t.Errorf("a changed tracing endpoint kept the trust: %s\n%s", res, errOut)
	}
	out, _, _ = sandcallIn(t, dir, nil, "servers", "trust", "--dry-run")
	if !strings.Contains(out, `changed  sandcall.yaml: tracing: {"otlp_endpoint":"http://127.0.0.1:9"} (was {"otlp_endpoint":"`+col.URL+`"})`) {
		t.Errorf("servers trust --dry-run does not show the change:\n%s", out)
	}
}
