package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/internal/testenv"
)

// fsServerVersion pins the official filesystem MCP server the real-upstream
// test installs from npm.
const fsServerVersion = "2026.8.31"

// installNPM installs pkg@version once into a temp dir keyed by both, and
// returns the dir (its node_modules holds the package). It skips the test
// when npm or the registry is unavailable.
func installNPM(t *testing.T, pkg, version string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped with -short: installs " + pkg + " from npm")
	}
	key := strings.NewReplacer("@", "", "/", "-").Replace(pkg) + "-" + version
	dir := filepath.Join(os.TempDir(), "sandcall-npm-"+key)
	pkgJSON := filepath.Join(append([]string{dir, "node_modules"}, append(strings.Split(pkg, "/"), "package.json")...)...)
	testenv.NPMInstall(t, dir, func() bool { return installedVersion(pkgJSON) == version }, pkg+"@"+version)
	return dir
}

// fsProject makes a project directory whose .mcp.json starts the real
// filesystem server on its data/ subdirectory, with list_threshold in
// sandcall.yaml (0: the default). No policy.
func fsProject(t *testing.T, threshold int) (project, data string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: node is not installed")
	}
	mods := installNPM(t, "@modelcontextprotocol/server-filesystem", fsServerVersion)
	entry := filepath.Join(mods, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("filesystem server entry point: %v", err)
	}
	project = t.TempDir()
	data = filepath.Join(project, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "notes.txt"), []byte("hello from the real server\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"filesystem": map[string]any{"command": node, "args": []string{entry, data}}}})
	if err := os.WriteFile(filepath.Join(project, ".mcp.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if threshold != 0 {
		y := "version: 1\nlist_threshold: " + itoa(threshold) + "\n"
		if err := os.WriteFile(filepath.Join(project, "sandcall.yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The project's servers run only once trusted (sandcall servers trust).
	if out, errOut, code := sandcallIn(t, project, nil, "servers", "trust"); code != 0 {
		t.Fatalf("servers trust: exit %d\n%s%s", code, out, errOut)
	}
	return project, data
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// fsSession serves project with the real binary over stdio and connects a
// go-sdk client; changed receives tools/list_changed notifications.
func fsSession(t *testing.T, project string) (cs *mcp.ClientSession, changed chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.Command(bin, "serve")
	cmd.Dir = project
	changed = make(chan struct{}, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	t.Cleanup(func() { kill(cmd) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, changed
}

// searchTools calls search_tools; until the upstream's tools are in the
// catalog (attach may finish after the session starts), it waits for the
// next tools/list_changed.
func searchTools(t *testing.T, cs *mcp.ClientSession, changed chan struct{}, query string, limit int) bindings.SearchResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: bindings.SearchToolsName,
			Arguments: map[string]any{"query": query, "limit": limit}})
		if err != nil {
			t.Fatalf("search_tools %q: %v", query, err)
		}
		if res.IsError {
			t.Fatalf("search_tools %q: %v", query, res.Content)
		}
		var sr bindings.SearchResult
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &sr); err != nil {
			t.Fatal(err)
		}
		if sr.Searched > 0 && hasFilesystem(sr.Searched, cs, ctx) {
			return sr
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("the filesystem server's tools never reached the catalog (search %q: %+v)", query, sr)
		}
	}
}

// hasFilesystem reports whether the catalog holds the filesystem server's
// tools yet: describe_tools knows filesystem_read_text_file.
func hasFilesystem(_ int, cs *mcp.ClientSession, ctx context.Context) bool {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: bindings.DescribeToolsName,
		Arguments: map[string]any{"names": []string{"filesystem_read_text_file"}}})
	return err == nil && !res.IsError
}

// runCode runs a program and returns its structured output.
func runCode(t *testing.T, cs *mcp.ClientSession, code string) (ok bool, result json.RawMessage, e *struct{ Code, Message, Hint string }) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": code}})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  *struct{ Code, Message, Hint string }
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r.OK, r.Result, r.Error
}

// TestRealUpstreamReachable: with the real filesystem MCP server from npm
// as an upstream, no policy, and a list threshold below its tool count
// (as a large real catalog is), through the real binary and a real MCP
// client:
//   - every tool search_tools returns is callable by that caller, by the
//     route its call field names (a program, or the direct MCP tool);
//   - a write tool (direct-only: the server does not mark it read-only) is
//     listed once a search surfaces it, with tools/list_changed, and a
//     direct call writes the file; from a program it is E_TOOL_DENIED with
//     a hint the model can follow;
//   - tools.no_such_tool() and a misspelling are E_TOOL_UNKNOWN with a
//     did-you-mean hint.
func TestRealUpstreamReachable(t *testing.T) {
	t.Parallel()
	project, data := fsProject(t, 5)
	cs, changed := fsSession(t, project)
	ctx := context.Background()

	seen := map[string]bindings.FoundTool{}
	for _, q := range []string{"read a file's contents", "write a file", "create a folder", "list a directory",
		"move or rename a file", "search for files by name", "file metadata", "edit a file"} {
		sr := searchTools(t, cs, changed, q, 10)
		if sr.Shown == 0 {
			t.Errorf("search %q found nothing", q)
		}
		for _, f := range sr.Tools {
			seen[f.Name] = f
		}
	}
	if len(seen) < 5 {
		t.Fatalf("searches found only %d tools: %v", len(seen), seen)
	}
	// Every tool shown is callable by its route: the call reaches the
	// tool (it may fail on the arguments {}), never E_TOOL_UNKNOWN or
	// E_TOOL_DENIED, never "unknown tool".
	<-changed // the direct-only tools the searches surfaced were announced
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tl := range lt.Tools {
		listed[tl.Name] = true
	}
	for name, f := range seen {
		if slices.Contains(f.Callers, "code") {
			ok, _, e := runCode(t, cs, "return await tools."+name+"({});")
			if !ok && (e.Code == "E_TOOL_UNKNOWN" || e.Code == "E_TOOL_DENIED") {
				t.Errorf("%s (call %q): from a program: %s %s", name, f.Call, e.Code, e.Message)
			}
			continue
		}
		if !strings.HasPrefix(f.Call, "directly as the MCP tool "+name) {
			t.Errorf("%s: callers %v, call %q", name, f.Callers, f.Call)
		}
		if !listed[name] {
			t.Errorf("%s: direct-only, surfaced by a search, but not in tools/list", name)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			t.Errorf("%s: direct call: %v", name, err)
			continue
		}
		if res.IsError {
			text := res.Content[0].(*mcp.TextContent).Text
			if strings.Contains(text, "E_TOOL_UNKNOWN") || strings.Contains(text, "E_TOOL_DENIED") {
				t.Errorf("%s: direct call: %s", name, text)
			}
		}
	}

	// The write tool, by its route.
	w, ok := seen["filesystem_write_file"]
	if !ok || slices.Contains(w.Callers, "code") {
		t.Fatalf("filesystem_write_file: %+v (want found, direct-only)", w)
	}
	target := filepath.Join(data, "written.txt")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "filesystem_write_file",
		Arguments: map[string]any{"path": target, "content": "written through sandcall"}})
	if err != nil || res.IsError {
		t.Fatalf("direct write_file: %v %v", err, res)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "written through sandcall" {
		t.Errorf("written file: %q, %v", b, err)
	}
	ok, _, e := runCode(t, cs, `return await tools.filesystem_write_file({path: "x", content: "y"});`)
	if ok || e.Code != "E_TOOL_DENIED" || !strings.Contains(e.Hint, "directly as an MCP tool") || strings.Contains(e.Hint, "Ask the user") {
		t.Errorf("write_file from a program: ok %v, %+v", ok, e)
	}

	// Unknown and misspelt tools from a program.
	ok, res2, e := runCode(t, cs, `try { await tools.no_such_tool({}); } catch (err) { return [err.code, err.hint]; }`)
	var got []string
	_ = json.Unmarshal(res2, &got)
	if !ok || len(got) != 2 || got[0] != "E_TOOL_UNKNOWN" || !strings.Contains(got[1], "search") {
		t.Errorf("tools.no_such_tool(): ok %v, %s, %+v", ok, res2, e)
	}
	ok, _, e = runCode(t, cs, `return await tools.filesystem_read_text_fil({path: "notes.txt"});`)
	if ok || e.Code != "E_TOOL_UNKNOWN" || !strings.Contains(e.Hint, "Did you mean tools.filesystem_read_text_file") {
		t.Errorf("misspelt tool: ok %v, %+v", ok, e)
	}
	ok, res2, _ = runCode(t, cs, `return ['filesystem_read_text_file' in tools, 'no_such_tool' in tools,
  (await tools.filesystem_read_text_file({path: `+jsonString(filepath.Join(data, "notes.txt"))+`}))];`)
	if !ok || !strings.HasPrefix(string(res2), `[true,false,`) || !strings.Contains(string(res2), "hello from the real server") {
		t.Errorf("read from a program: ok %v, %s", ok, res2)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestRealUpstreamCLIParity: `sandcall tools search`, `tools describe` and
// `policy explain` see the same catalog as the server (the real filesystem
// server from npm, no policy) and give the same answers.
func TestRealUpstreamCLIParity(t *testing.T) {
	t.Parallel()
	project, _ := fsProject(t, 0)
	cs, changed := fsSession(t, project)
	ctx := context.Background()
	run := func(args ...string) (string, int) {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(cctx, bin, args...)
		cmd.Dir = project
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}

	for _, q := range []string{"write a file", "read a file's contents", "create a folder"} {
		server := searchTools(t, cs, changed, q, 10)
		out, code := run("tools", "search", "--json", "--limit", "10", q)
		var cli bindings.SearchResult
		if code != 0 || json.Unmarshal([]byte(out), &cli) != nil {
			t.Fatalf("tools search %q: exit %d\n%s", q, code, out)
		}
		sj, _ := json.Marshal(server.Tools)
		cj, _ := json.Marshal(cli.Tools)
		if string(sj) != string(cj) || server.Searched != cli.Searched {
			t.Errorf("search %q: server %s (searched %d)\ncli %s (searched %d)", q, sj, server.Searched, cj, cli.Searched)
		}
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: bindings.DescribeToolsName,
		Arguments: map[string]any{"names": []string{"filesystem_write_file", "filesystem_read_text_file"}}})
	if err != nil || res.IsError {
		t.Fatalf("describe_tools: %v %v", err, res)
	}
	var sd bindings.DescribeResult
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &sd)
	if text := res.Content[0].(*mcp.TextContent).Text; text != sd.Declarations || !strings.Contains(text, "filesystem_write_file(args") {
		t.Errorf("describe_tools' text block is not the plain declarations:\n%s", text)
	}
	out, code := run("tools", "describe", "filesystem_write_file", "filesystem_read_text_file")
	if code != 0 || strings.TrimSpace(out) != strings.TrimSpace(sd.Declarations) {
		t.Errorf("tools describe: exit %d\n%s\nserver:\n%s", code, out, sd.Declarations)
	}

	// policy explain decides as the server does: write_file is direct-only
	// (no policy, not read-only), read_text_file callable by both.
	for _, c := range []struct {
		tool, caller, decision string
	}{
		{"filesystem_write_file", "code", "deny"},
		{"filesystem_write_file", "direct", "allow"},
		{"filesystem_read_text_file", "code", "allow"},
	} {
		out, code := run("policy", "explain", "--tool", c.tool, "--caller", c.caller)
		if code != 0 || !strings.Contains(out, "decision:  "+c.decision+"\n") || !strings.Contains(out, "exists:    yes") ||
			!strings.Contains(out, "source filesystem") {
			t.Errorf("policy explain %s %s: exit %d\n%s", c.tool, c.caller, code, out)
		}
	}
	// The server agrees: from a program, write_file is denied, read_text_file is not.
	if ok, _, e := runCode(t, cs, `return await tools.filesystem_write_file({path: "x", content: "y"});`); ok || e.Code != "E_TOOL_DENIED" {
		t.Errorf("server: write_file from code: ok %v %+v", ok, e)
	}
	out, code = run("policy", "explain", "--tool", "filesystem_write_fil", "--caller", "direct")
	if code != 1 || !strings.Contains(out, "exists:    no") || !strings.Contains(out, "did you mean filesystem_write_file") {
		t.Errorf("policy explain of a misspelt tool: exit %d\n%s", code, out)
	}
}
