package cli

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// clientLayout is one client's project layout from the README: the file
// the client reads and what it holds.
type clientLayout struct {
	client string // Claude Code, Cursor, VS Code
	file   string // relative to the project
	json   string
}

// readmeLayouts finds the client layouts in README.md's own text: every
// fenced json block that lists sandcall with --mcp-config. A block under
// "mcpServers" is the layout of Claude Code (.mcp.json) and of Cursor
// (.cursor/mcp.json); one under "servers", of VS Code (.vscode/mcp.json).
// When the README gives VS Code's layout in words only (the key is servers,
// the path ${workspaceFolder}/…, cwd ${workspaceFolder}), it is built from
// the mcpServers block as those words say.
func readmeLayouts(t *testing.T) []clientLayout {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []clientLayout
	var mcpServers string
	for _, m := range regexp.MustCompile("(?s)```json\\s*\\n(.*?)\\n```").FindAllStringSubmatch(string(readme), -1) {
		block := m[1]
		if !strings.Contains(block, "sandcall") || !strings.Contains(block, "--mcp-config") {
			continue
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal([]byte(block), &top); err != nil {
			t.Fatalf("README.md: a client layout is not JSON: %v\n%s", err, block)
		}
		if _, ok := top["servers"]; ok {
			out = append(out, clientLayout{"VS Code", ".vscode/mcp.json", block})
			continue
		}
		mcpServers = block
		out = append(out, clientLayout{"Claude Code", ".mcp.json", block}, clientLayout{"Cursor", ".cursor/mcp.json", block})
	}
	if mcpServers == "" {
		t.Fatal("README.md has no json block listing sandcall with --mcp-config under mcpServers")
	}
	if !slices.ContainsFunc(out, func(l clientLayout) bool { return l.client == "VS Code" }) {
		if !strings.Contains(string(readme), "${workspaceFolder}/.sandcall/mcp.json") || !strings.Contains(string(readme), `"cwd": "${workspaceFolder}"`) {
			t.Fatal("README.md gives VS Code's layout neither as a json block nor in words")
		}
		var top map[string]map[string]map[string]any
		_ = json.Unmarshal([]byte(mcpServers), &top)
		for _, def := range top["mcpServers"] {
			args := def["args"].([]any)
			for i, a := range args {
				if a == ".sandcall/mcp.json" {
					args[i] = "${workspaceFolder}/.sandcall/mcp.json"
				}
			}
			def["cwd"] = "${workspaceFolder}"
		}
		b, _ := json.Marshal(map[string]any{"servers": top["mcpServers"]})
		t.Log("README.md gives VS Code's layout in words; testing it as they say")
		out = append(out, clientLayout{"VS Code", ".vscode/mcp.json", string(b)})
	}
	return out
}

// TestReadmeClientLayouts: each client layout of the README, as written,
// works through the binary as a newcomer would use it. In a project whose
// client file lists sandcall with --mcp-config .sandcall/mcp.json (an
// upstream server there, a script in .agents/tools, a policy in
// sandcall.yaml): `servers trust` run plainly trusts the upstream and the
// script and never sandcall itself; `serve`, started as the client starts
// it, serves the upstream's and the script's tools under the policy;
// `tools list` and `policy test` run plainly agree with it; and no nested
// sandcall tool appears anywhere.
func TestReadmeClientLayouts(t *testing.T) {
	t.Parallel()
	for _, l := range readmeLayouts(t) {
		t.Run(l.client, func(t *testing.T) {
			t.Parallel()
			testLayout(t, l)
		})
	}
}

func testLayout(t *testing.T, l clientLayout) {
	dir := t.TempDir()
	pathEnv := "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH") // "sandcall" is this build
	mkdir(t, dir, filepath.Dir(l.file))
	writeFile(t, dir, l.file, l.json)
	mkdir(t, dir, ".sandcall")
	up, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"command": demoBin, "args": []string{"serve", "--demo", "--isolation", "inprocess"}}}})
	writeFile(t, dir, ".sandcall/mcp.json", string(up))
	mkdir(t, dir, ".agents/tools")
	writeScript(t, dir, "hello", helloScript)
	writeFile(t, dir, "sandcall.yaml", "version: 1\npolicy: policy.yaml\n")
	writeFile(t, dir, "policy.yaml", "version: 1\nrules:\n  - name: demo-reads-for-programs\n    tools: [\"demo_get_*\"]\n    match: {read_only: true, source: demo}\n    allowed_callers: [code]\n")
	writeFile(t, dir, "policy_test.yaml", `policy: policy.yaml
cases:
  - {name: a program reads expenses, tool: demo_get_expenses, caller: code, expect: allow, rule: demo-reads-for-programs}
  - {name: the model does not, tool: demo_get_expenses, caller: direct, expect: deny, rule: demo-reads-for-programs}
`)

	// servers trust, run plainly in the project.
	out, errOut, code := sandcallIn(t, dir, []string{pathEnv}, "servers", "trust")
	for _, want := range []string{"never    server sandcall (" + l.file + "): sandcall itself, never trusted or started (it reads .sandcall/mcp.json",
		"new      server demo (.sandcall/mcp.json): runs " + demoBin, "new      script .agents/tools/hello"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("servers trust: exit %d, no %q\n%s%s", code, want, out, errOut)
		}
	}

	// serve, started as the client starts it.
	var file map[string]map[string]struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Cwd     string   `json:"cwd"`
	}
	if err := json.Unmarshal([]byte(l.json), &file); err != nil {
		t.Fatal(err)
	}
	entry := file["mcpServers"]["sandcall"]
	if l.client == "VS Code" {
		entry = file["servers"]["sandcall"]
	}
	expand := func(s string) string { return strings.ReplaceAll(s, "${workspaceFolder}", dir) }
	args := make([]string, len(entry.Args))
	for i, a := range entry.Args {
		args[i] = expand(a)
	}
	exe, err := exec.LookPath(filepath.Join(filepath.Dir(bin), entry.Command))
	if err != nil || entry.Command != "sandcall" {
		t.Fatalf("the layout runs %q: %v", entry.Command, err)
	}
	cmd := exec.Command(exe, append(args, "--isolation", "inprocess")...)
	cmd.Dir = dir
	if entry.Cwd != "" {
		cmd.Dir = expand(entry.Cwd)
	}
	cmd.Env = testEnv(pathEnv)
	stderr := new(sandboxtest.Buffer)
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: l.client, Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer func() { cs.Close(); kill(cmd) }()
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	direct := map[string]bool{}
	for _, tl := range listed.Tools {
		direct[tl.Name] = true
	}
	if !direct["demo_ping"] || !direct["hello"] || direct["demo_get_expenses"] || !direct["run_code"] {
		t.Errorf("serve lists %v: want demo_ping and hello, not demo_get_expenses (the policy keeps it for programs)\n%s", slices.Sorted(maps.Keys(direct)), stderr.String())
	}
	ok, res, ecode, msg := runOutcome(t, ctx, cs, map[string]any{"code": `const names = Object.keys(tools).filter(n => n.startsWith("sandcall_"))
return [await tools.demo_ping({n: 1}), await tools.hello({name: "ada"}), (await tools.demo_get_expenses({member_id: "ENG-001", quarter: "Q3"})).length > 0, names, "sandcall_run_code" in tools]`})
	if !ok || res != `[2,"hello ada",true,[],false]` {
		t.Errorf("run_code through serve: %v %s %s %s\n%s", ok, res, ecode, msg, stderr.String())
	}
	for name := range direct {
		if strings.HasPrefix(name, "sandcall_") {
			t.Errorf("serve lists a nested sandcall tool: %s", name)
		}
	}

	// tools list, run plainly, sees what serve serves.
	out, errOut, code = sandcallIn(t, dir, []string{pathEnv}, "tools", "list", "--json")
	var rows []toolRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != 0 {
		t.Fatalf("tools list: exit %d: %v\n%s%s", code, err, out, errOut)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r.Name] = strings.Join(r.Callers, ",") + " " + r.Status
		if strings.HasPrefix(r.Name, "sandcall_") && r.Name != "sandcall_*" {
			t.Errorf("tools list shows a nested sandcall tool: %+v", r)
		}
	}
	for name, want := range map[string]string{"demo_ping": "direct,code ok", "hello": "direct,code ok", "demo_get_expenses": "code ok",
		"sandcall_*": " sandcall itself: never started (its tools are this sandcall's)"} {
		if got[name] != want {
			t.Errorf("tools list: %s is %q, want %q\n%s", name, got[name], want, errOut)
		}
	}

	// policy test, run plainly, decides with the catalog serve uses.
	if out, errOut, code := sandcallIn(t, dir, []string{pathEnv}, "policy", "test", "policy_test.yaml"); code != 0 {
		t.Errorf("policy test: exit %d\n%s%s", code, out, errOut)
	}
}
