package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/internal/testenv"
)

// tsSDKVersion pins the official TypeScript MCP SDK the interop test uses.
const tsSDKVersion = "1.32.2"

// TestTypeScriptSDK runs testdata/ts_client.mjs, a client built on the
// official TypeScript SDK, against `sandcall serve --demo` over stdio.
func TestTypeScriptSDK(t *testing.T) {
	// Parallel: it spends most of its time waiting on a subprocess; the
	// package's parallel tests run together after the others.
	t.Parallel()
	node, client := tsSDKScript(t, "ts_client.mjs")
	prog := writeProgram(t)

	stdout, stderr := runTSClient(t, node, client, bin, prog)
	var got struct {
		Tools []struct {
			Name            string `json:"name"`
			HasOutputSchema bool   `json:"hasOutputSchema"`
			ReadOnly        *bool  `json:"readOnly"`
		} `json:"tools"`
		Run struct {
			IsError bool   `json:"isError"`
			OK      bool   `json:"ok"`
			Calls   int    `json:"calls"`
			Result  string `json:"result"`
		} `json:"run"`
		Direct struct {
			IsError    bool           `json:"isError"`
			Structured map[string]any `json:"structured"`
		} `json:"direct"`
		Bad struct {
			IsError bool   `json:"isError"`
			Code    string `json:"code"`
		} `json:"bad"`
		Failed struct {
			IsError bool   `json:"isError"`
			Code    string `json:"code"`
		} `json:"failed"`
	}
	line := strings.TrimSpace(stdout)
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("ts client output %q: %v\nstderr: %s", line, err, stderr)
	}
	names := map[string]bool{}
	for _, tl := range got.Tools {
		names[tl.Name] = true
		if !tl.HasOutputSchema {
			t.Errorf("%s: no output schema seen by the TS SDK", tl.Name)
		}
	}
	for _, n := range []string{"run_code", "get_team_members", "get_budget_by_level", "get_expenses", "ping"} {
		if !names[n] {
			t.Errorf("TS SDK did not list %s (got %v)", n, got.Tools)
		}
	}
	// The result went through JSON.parse/JSON.stringify in JS, which keeps
	// property order: it must still be the reference bytes.
	if got.Run.IsError || !got.Run.OK || got.Run.Calls != 56 || got.Run.Result != string(expense.ReferenceSummary()) {
		t.Errorf("run_code via the TS SDK = %+v", got.Run)
	}
	if got.Direct.IsError || got.Direct.Structured["level"] != "L3" {
		t.Errorf("direct call via the TS SDK = %+v", got.Direct)
	}
	if !got.Bad.IsError || got.Bad.Code != "E_TOOL_ARGS" {
		t.Errorf("bad direct call via the TS SDK = %+v", got.Bad)
	}
	if !got.Failed.IsError || got.Failed.Code != "E_GUEST_ERROR" {
		t.Errorf("failing program via the TS SDK = %+v", got.Failed)
	}
}

// tsSDKScript skips the test with -short or without node and npm, installs
// the pinned SDK and copies testdata/rel into its install dir, where node
// resolves the SDK; it returns node and the script's path there.
func tsSDKScript(t *testing.T, rel string) (node, path string) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped with -short: installs the TypeScript MCP SDK from npm")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: node is not installed (needed to run the TypeScript MCP SDK)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("skipped: npm is not installed (needed to install the TypeScript MCP SDK)")
	}
	sdk := installTSSDK(t, npm)
	script, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(sdk, filepath.Base(rel))
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	return node, path
}

// runTSClient runs a script of the TypeScript SDK with node (given 2
// minutes) and returns its output; it fails the test if the script fails.
func runTSClient(t *testing.T, node string, args ...string) (stdout, stderr string) {
	t.Helper()
	return runTSClientIn(t, "", node, args...)
}

// runTSClientIn is runTSClient in the working directory dir (where the
// sandcall it starts keeps its pins).
func runTSClientIn(t *testing.T, dir, node string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("ts client: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// installTSSDK installs the pinned SDK once into a temp dir keyed by version
// and reuses it on later runs.
func installTSSDK(t *testing.T, _ string) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "sandcall-ts-sdk-"+tsSDKVersion)
	pkg := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	testenv.NPMInstall(t, dir, func() bool { return installedVersion(pkg) == tsSDKVersion }, "@modelcontextprotocol/sdk@"+tsSDKVersion)
	return dir
}

func installedVersion(pkgJSON string) string {
	b, err := os.ReadFile(pkgJSON)
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(b, &p)
	return p.Version
}
