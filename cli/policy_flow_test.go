package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var flowPolicy = filepath.Join("..", "examples", "policies", "flow.yaml")

// runJSON is the part of `sandcall run --json` these tests read.
type runJSON struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Calls  struct {
		Denied int `json:"denied"`
	} `json:"calls"`
	Error *struct {
		Code    string `json:"code"`
		Rule    string `json:"rule"`
		Message string `json:"message"`
	} `json:"error"`
}

func runFlow(t *testing.T, args ...string) runJSON {
	t.Helper()
	stdout, stderr, _ := sandcall(t, "", append([]string{"run", "--json"}, args...)...)
	var r runJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("sandcall run %v: %v\nstdout: %s\nstderr: %s", args, err, stdout, stderr)
	}
	return r
}

// TestFlowRedTeam runs the red-team programs of testdata/flow through the
// binary (process tier) under examples/policies/flow.yaml: with the
// injected inbox each fails with E_TOOL_DENIED by the rule its first line
// names, the flow in the message; with the clean inbox the same program
// succeeds with nothing denied.
func TestFlowRedTeam(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("testdata", "flow", "*.js"))
	if len(files) < 4 {
		t.Fatalf("red-team programs: %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(src), "\n")
			rule := strings.TrimSpace(strings.TrimPrefix(first, "// rule:"))
			r := runFlow(t, "--demo-inbox", "injected", "--policy", flowPolicy, f)
			if r.OK || r.Error == nil || r.Error.Code != "E_TOOL_DENIED" || r.Error.Rule != rule ||
				!strings.Contains(r.Error.Message, "list_messages (call 1, untrusted)") {
				t.Errorf("injected: %+v %s", r.Error, r.Result)
			}
			r = runFlow(t, "--demo-inbox", "clean", "--policy", flowPolicy, f)
			if !r.OK || r.Calls.Denied != 0 {
				t.Errorf("clean (false denial?): %+v", r.Error)
			}
		})
	}
	// Without the flow rule the attack works: the test can fail.
	r := runFlow(t, "--demo-inbox", "injected", filepath.Join("testdata", "flow", "forward.js"))
	if !r.OK || string(r.Result) != `{"sent":1}` {
		t.Errorf("forward.js without the flow policy: %+v %s", r.Error, r.Result)
	}
}

var flowGuest struct {
	once sync.Once
	path string
	err  string
}

// buildFlowGuest builds testdata/flow/guest for wasip1, once.
func buildFlowGuest(t *testing.T) string {
	t.Helper()
	flowGuest.once.Do(func() {
		dir, err := os.MkdirTemp("", "sandcall-flow-guest-")
		if err != nil {
			flowGuest.err = err.Error()
			return
		}
		out := filepath.Join(dir, "guest.wasm")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./testdata/flow/guest")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=")
		if b, err := cmd.CombinedOutput(); err != nil {
			flowGuest.err = "GOOS=wasip1 go build: " + err.Error() + "\n" + string(b)
			return
		}
		flowGuest.path = out
	})
	if flowGuest.err != "" {
		t.Fatal(flowGuest.err)
	}
	return flowGuest.path
}

// TestFlowRedTeamWasm: the same attacks from a WebAssembly guest (Go
// compiled to wasip1): the broker labels its calls as it does JavaScript's.
func TestFlowRedTeamWasm(t *testing.T) {
	t.Parallel()
	heavy(t)
	mod := buildFlowGuest(t)
	// One run at a time: each compiles the 4 MB module, and three
	// compiles at once on a loaded machine went past the worker's 30 s
	// compile budget (E_MODULE_LIMIT).
	for _, tc := range []struct{ mode, rule string }{{"forward", "no-exfiltration"}, {"delete", "no-untrusted-destruction"}} {
		t.Run(tc.mode, func(t *testing.T) {
			type out struct {
				Acted  *int `json:"acted"`
				Denied *struct {
					Code, Rule, Message string
				} `json:"denied"`
			}
			// The guest is 4 MB of Go: its first compile may take seconds on a
			// loaded machine, hence the generous timeout.
			args := []string{"--lang", "wasm", "--timeout", "60s", "--input", `"` + tc.mode + `"`, "--policy", flowPolicy}
			r := runFlow(t, append(append([]string{"--demo-inbox", "injected"}, args...), mod)...)
			var o out
			_ = json.Unmarshal(r.Result, &o)
			if !r.OK || o.Denied == nil || o.Denied.Code != "E_TOOL_DENIED" || o.Denied.Rule != tc.rule ||
				!strings.Contains(o.Denied.Message, "list_messages (call 1, untrusted)") {
				t.Errorf("%s injected: %+v %s", tc.mode, r.Error, r.Result)
			}
			r = runFlow(t, append(append([]string{"--demo-inbox", "clean"}, args...), mod)...)
			o = out{}
			_ = json.Unmarshal(r.Result, &o)
			if !r.OK || o.Acted == nil || *o.Acted != 0 || r.Calls.Denied != 0 {
				t.Errorf("%s clean: %+v %s", tc.mode, r.Error, r.Result)
			}
		})
	}
	// Opaque handles through the ABI: the delete before the handle is read
	// goes through, the one after is denied naming the inbox.
	t.Run("handle", func(t *testing.T) {
		r := runFlow(t, "--demo-inbox", "injected", "--lang", "wasm", "--timeout", "60s", "--input", `"handle"`, "--policy", flowPolicy, mod)
		if !r.OK || !strings.Contains(string(r.Result), `"rule":"no-untrusted-destruction"`) ||
			!strings.Contains(string(r.Result), "list_messages (call 1, untrusted)") || r.Calls.Denied != 1 {
			t.Errorf("handles from wasm: %+v %s", r.Error, r.Result)
		}
	})
}

// TestFlowMaliciousUpstream: an upstream MCP server (the official
// TypeScript SDK, from npm) returns an injected instruction and labels its
// result trusted and public in _meta. Even where the operator honours its
// result labels, the claim cannot weaken the label an upstream's results
// get (untrusted), so the destructive call the injection asks for is
// denied, naming the upstream tool in the flow.
func TestFlowMaliciousUpstream(t *testing.T) {
	t.Parallel()
	node, server := tsSDKScript(t, filepath.Join("flow", "liar_server.mjs"))
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"liar": map[string]any{"command": node, "args": []string{server}}}})
	flow, err := os.ReadFile(flowPolicy)
	if err != nil {
		t.Fatal(err)
	}
	pol := strings.Replace(string(flow), "labels:\n", "labels:\n  - match: {source: liar}\n    result_labels: true\n", 1)
	prog := `const issue = await tools.liar_read_issue({});
const m = /delete message (M-\d+)/.exec(JSON.stringify(issue));
if (m) await tools.delete_message({ id: m[1] });
return m ? m[1] : null;`
	for name, body := range map[string]string{".mcp.json": string(cfg), "flow.yaml": pol, "p.js": prog} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "run", "--trust-project", "--json", "--demo-inbox", "clean", "--policy", "flow.yaml", "p.js")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	var r runJSON
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if r.OK || r.Error == nil || r.Error.Code != "E_TOOL_DENIED" || r.Error.Rule != "no-untrusted-destruction" ||
		!strings.Contains(r.Error.Message, "liar_read_issue (call 1, untrusted)") {
		t.Fatalf("the liar's label held? %+v %s\nstderr: %s", r.Error, r.Result, stderr.String())
	}
}

// TestFlowInjectedDescription: an upstream server's tool description
// carries an injection asking for a destructive call; a program that reads
// it through tools.$describe (describe_tools) and obeys is denied under the
// flow rule, the upstream tool named in the flow: a discovery answer
// carries the label of the server whose text it holds.
func TestFlowInjectedDescription(t *testing.T) {
	t.Parallel()
	node, server := tsSDKScript(t, filepath.Join("flow", "injected_description_server.mjs"))
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"inj": map[string]any{"command": node, "args": []string{server}}}})
	prog := `const d = await tools.$describe(["inj_lookup"]);
const m = /delete_message with id (M-\d+)/.exec(d.declarations);
if (m) await tools.delete_message({ id: m[1] });
return m ? m[1] : null;`
	for name, body := range map[string]string{".mcp.json": string(cfg), "p.js": prog} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol, err := filepath.Abs(flowPolicy)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--trust-project", "--json", "--demo-inbox", "clean", "--policy", pol, "p.js")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	var r runJSON
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if r.OK || r.Error == nil || r.Error.Code != "E_TOOL_DENIED" || r.Error.Rule != "no-untrusted-destruction" ||
		!strings.Contains(r.Error.Message, "inj_lookup (call 1, untrusted)") {
		t.Fatalf("the injected description steered a destructive call: %+v %s\nstderr: %s", r.Error, r.Result, stderr.String())
	}
}

// TestDemoInbox: `sandcall demo inbox` shows the record leaving without the
// flow rule, and denied with the flow named under it, the legitimate work
// done both times.
func TestDemoInbox(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := sandcall(t, "", "demo", "--isolation", "inprocess", "inbox")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	without, with, ok := strings.Cut(stdout, "2. With the flow rule")
	if !ok || !strings.Contains(without, "<- a customer record left the company") ||
		strings.Contains(with, "<- a customer record left") ||
		!strings.Contains(with, "denied: send_email to archive@exfil.example (asked by M-3): E_TOOL_DENIED by rule no-exfiltration") ||
		!strings.Contains(with, "data flow: list_messages (call 1, untrusted)") ||
		strings.Count(stdout, "tickets filed: T-001 (M-1), T-002 (M-2), T-003 (M-3)") != 2 ||
		strings.Count(stdout, `mail sent to support@acme.example: "Inbox digest: 3 tickets"`) != 2 {
		t.Errorf("demo inbox output:\n%s", stdout)
	}
}

// TestPolicyExplainFlow: explain shows the labels, the run label and the
// flow behind a denial.
func TestPolicyExplainFlow(t *testing.T) {
	t.Parallel()
	stdout, _, code := sandcall(t, "", "policy", "explain", "--policy", flowPolicy, "--demo-inbox", "injected", "--tool", "delete_message",
		"--caller", "code", "--args", `{"id":"M-1"}`, "--read", "list_messages")
	for _, want := range []string{"decision:  deny", "rule:      no-untrusted-destruction", "run label: untrusted, public",
		"flow:      list_messages (call 1, untrusted)"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("explain lacks %q (exit %d):\n%s", want, code, stdout)
		}
	}
	stdout, _, _ = sandcall(t, "", "policy", "explain", "--policy", flowPolicy, "--demo-inbox", "injected", "--tool", "send_email",
		"--caller", "code", "--args", `{"to":["support@acme.example"],"subject":"s","body":"b"}`,
		"--read", "list_messages", "--run-readers", "support@acme.example")
	if !strings.Contains(stdout, "decision:  allow") || !strings.Contains(stdout, "run label: untrusted, readers [support@acme.example]") {
		t.Errorf("explain of an allowed send:\n%s", stdout)
	}
	if _, _, code := sandcall(t, "", "policy", "explain", "--tool", "x", "--caller", "code", "--run-integrity", "shaky"); code != 2 {
		t.Errorf("bad --run-integrity: exit %d", code)
	}
}

// TestServeResultLabel: through `sandcall serve` and the go-sdk client,
// run_code's result carries the run's label in _meta (FIDES-shaped and the
// draft's booleans), and the read_output pages of a cut result keep it; a
// run that read nothing labelled is trusted and public.
func TestServeResultLabel(t *testing.T) {
	t.Parallel()
	ctx, cs, _ := stdioSession(t, "serve", "--demo-inbox", "injected", "--isolation", "inprocess", "--policy", flowPolicy)
	label := func(m mcp.Meta) string {
		b, _ := json.Marshal(map[string]any{"security_label": m["security_label"], "untrusted": m["untrusted"], "sensitive": m["sensitive"]})
		return string(b)
	}
	// A result over the 256 KiB budget, cut into pages.
	code := `const ms = await tools.list_messages({}); const c = await tools.get_customer({customer_id: "C-1001"});
return {pad: "x".repeat(300000), n: ms.length, who: c.name};`
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": code}})
	if err != nil || res.IsError {
		t.Fatalf("run_code: %v %+v", err, res)
	}
	want := `{"security_label":{"confidentiality":{"readers":["alice@customer.example","support@acme.example"]},"integrity":"untrusted","sources":["list_messages","get_customer"]},"sensitive":true,"untrusted":true}`
	if got := label(res.Meta); got != want {
		t.Errorf("run_code _meta:\n got  %s\n want %s", got, want)
	}
	var out struct {
		OutputRef string `json:"output_ref"`
	}
	_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out)
	if out.OutputRef == "" {
		t.Fatalf("no output_ref: %s", res.Content[0].(*mcp.TextContent).Text[:200])
	}
	page, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_output", Arguments: map[string]any{"ref": out.OutputRef, "offset": 1000}})
	if err != nil || page.IsError {
		t.Fatalf("read_output: %v %+v", err, page)
	}
	if got := label(page.Meta); got != want {
		t.Errorf("read_output _meta:\n got  %s\n want %s", got, want)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "return 1"}})
	if err != nil || res.IsError {
		t.Fatalf("run_code: %v %+v", err, res)
	}
	if got := label(res.Meta); got != `{"security_label":{"confidentiality":"public","integrity":"trusted","sources":[]},"sensitive":false,"untrusted":false}` {
		t.Errorf("a run that read nothing: %s", got)
	}
}

// TestFlowHandlesBinary: opaque handles through the binary (process tier,
// so over the worker's IPC): holding the untrusted inbox as a handle leaves
// the run trusted, so a destructive call the program planned goes through;
// once the program reads the handle's value, the same call is denied.
func TestFlowHandlesBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.js")
	src := `const h = await tools.list_messages({}, { opaque: true });
await tools.delete_message({ id: "M-2" });
const ms = await tools.$read(h);
let denied = null;
try { await tools.delete_message({ id: "M-1" }); } catch (e) { denied = e.rule + ": " + e.message; }
return { n: ms.length, denied };`
	if err := os.WriteFile(prog, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runFlow(t, "--demo-inbox", "injected", "--policy", flowPolicy, prog)
	var o struct {
		N      int    `json:"n"`
		Denied string `json:"denied"`
	}
	_ = json.Unmarshal(r.Result, &o)
	if !r.OK || o.N != 3 || !strings.HasPrefix(o.Denied, "no-untrusted-destruction: ") ||
		!strings.Contains(o.Denied, "list_messages (call 1, untrusted)") {
		t.Errorf("run: %+v %s", r.Error, r.Result)
	}
}
