// Package openapitest runs GitHub's own OpenAPI description against a
// real mock server, Prism, both from npm, for the tests of tools/openapi
// and of the command line. It is a test helper: it installs what it needs
// once per machine and skips a test when npm, node or the registry is
// unavailable.
package openapitest

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sandcall/sandcall/internal/testenv"
)

// GitHub's own OpenAPI description and a real mock server from npm.
const (
	octokitVersion = "23.0.2" // @octokit/openapi
	prismVersion   = "5.16.0" // @stoplight/prism-cli
)

// npmDir installs the packages once per machine (testenv.NPMInstall) and
// returns the install's directory; it skips the test when npm or the
// registry is unavailable.
func npmDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "sandcall-npm-openapi-octokit-"+octokitVersion+"-prism-"+prismVersion)
	testenv.NPMInstall(t, dir, func() bool {
		return pkgVersion(filepath.Join(dir, "node_modules/@octokit/openapi/package.json")) == octokitVersion &&
			pkgVersion(filepath.Join(dir, "node_modules/@stoplight/prism-cli/package.json")) == prismVersion
	}, "@octokit/openapi@"+octokitVersion, "@stoplight/prism-cli@"+prismVersion)
	return dir
}

func pkgVersion(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var p struct{ Version string }
	json.Unmarshal(b, &p)
	return p.Version
}

// GitHubSpec returns the path of GitHub's own OpenAPI description
// (@octokit/openapi's api.github.com.json, 1,223 operations), installing
// it from npm once per machine; it skips the test without npm or the
// registry.
func GitHubSpec(t testing.TB) string {
	return filepath.Join(npmDir(t), "node_modules/@octokit/openapi/generated/api.github.com.json")
}

// StartPrism runs Prism's mock server (@stoplight/prism-cli, installed
// with the description) for spec on a free loopback port and returns its
// URL; the test's cleanup stops it. It skips the test without node.
func StartPrism(t testing.TB, spec string) string {
	t.Helper()
	dir := npmDir(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: node is not installed")
	}
	cmd := exec.Command(node, filepath.Join(dir, "node_modules/@stoplight/prism-cli/dist/index.js"),
		"mock", "-h", "127.0.0.1", "-p", strconv.Itoa(port), spec)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	ready := make(chan struct{})
	var tail []string
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			tail = append(tail[max(0, len(tail)-20):], line)
			mu.Unlock()
			if strings.Contains(line, "Prism is listening") {
				close(ready)
				break
			}
		}
		for sc.Scan() { // keep the pipe drained
		}
	}()
	select {
	case <-ready:
	case <-time.After(3 * time.Minute):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("Prism did not start:\n%s", strings.Join(tail, "\n"))
	}
	return "http://127.0.0.1:" + strconv.Itoa(port)
}
