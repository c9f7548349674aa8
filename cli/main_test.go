package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/internal/testenv"
)

// bin is the sandcall binary (testenv.Binary); the tests run it as a
// user or an MCP client would. demoBin is a copy of it under another name
// (testenv.DemoServer), for tests that use `serve --demo` as an upstream
// server: an entry that runs sandcall itself (bin) is never started as one.
var bin, demoBin string

func TestMain(m *testing.M) {
	// The red-team test's canary, set once for the whole binary rather than
	// with t.Setenv, which forbids running in parallel.
	os.Setenv("SANDCALL_TEST_SECRET", canary)
	// The tests run the binary and mostly wait on its processes (runs
	// ending at their deadline, servers starting, npm servers answering):
	// run more of them at a time than the default of one per CPU, unless
	// -parallel says how many.
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", strconv.Itoa(max(4, runtime.GOMAXPROCS(0))))
	}
	var err error
	if bin, err = testenv.Binary(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if demoBin, err = testenv.DemoServer(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Trust records and the user's own config live in the test's
	// directories, never the developer's: every binary the tests start
	// inherits these.
	dir, err := os.MkdirTemp("", "sandcall-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, v := range []string{"XDG_STATE_HOME", "XDG_CONFIG_HOME"} {
		d := filepath.Join(dir, strings.ToLower(v))
		if err := os.MkdirAll(d, 0o700); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Setenv(v, d)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	stdout, _, code := sandcall(t, "", "version")
	if code != 0 || !regexp.MustCompile(`^sandcall 0\.1\.0-dev \(go1\.[0-9.]+.*\)\n$`).MatchString(stdout) {
		t.Fatalf("version: exit %d, %q", code, stdout)
	}
	for _, args := range [][]string{{"--help"}, {"help"}, {"serve", "--help"}, {"run", "-h"}, {"demo", "--help"}, {"help", "run"}} {
		stdout, _, code := sandcall(t, "", args...)
		if code != 0 || !strings.Contains(stdout, "sandcall") || !strings.Contains(stdout, "Example") {
			t.Errorf("%v: exit %d, %q", args, code, stdout)
		}
	}
	for _, args := range [][]string{{}, {"bogus"}, {"tools"}} {
		_, stderr, code := sandcall(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "Usage") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}
