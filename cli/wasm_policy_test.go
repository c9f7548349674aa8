package cli

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox"
)

// TestWasmPolicyDenial runs a WebAssembly program through run_code over
// stdio, in the process tier, under a policy that denies ping({n: 13})
// (testdata/deny13.yaml): the guest gets status 1 and the denial's error
// JSON, naming the rule, and the run counts one denied call. ping({n: 12})
// passes the same rule.
func TestWasmPolicyDenial(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile("testdata/wasm/call_input.wasm") // input ["NAME",ARGS]: one call, result = payload
	if err != nil {
		t.Fatal(err)
	}
	ctx, cs, _ := stdioSession(t, "serve", "--demo", "--policy", "testdata/deny13.yaml")
	run := func(input string) sandbox.Result {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
			"language": "wasm", "module_base64": base64.StdEncoding.EncodeToString(mod), "input": json.RawMessage(input)}})
		if err != nil {
			t.Fatal(err)
		}
		var r sandbox.Result
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if !r.OK {
			t.Fatalf("%s: run failed: %v (logs %q)", input, r.Error, r.Logs)
		}
		if r.Tier == "" || r.Tier == "inprocess" {
			t.Errorf("tier = %q, want the process tier", r.Tier)
		}
		return r
	}

	r := run(`["ping",{"n":13}]`)
	var denial sandbox.Error
	if err := json.Unmarshal(r.Result, &denial); err != nil {
		t.Fatalf("result %s is not an error JSON: %v", r.Result, err)
	}
	if denial.Code != sandbox.EToolDenied || denial.Rule != "no-thirteen" || denial.Tool != "ping" {
		t.Errorf("the guest read %s, want E_TOOL_DENIED by rule no-thirteen", r.Result)
	}
	if denial.Message == "" || denial.Hint != "Ping another number." {
		t.Errorf("denial message %q, hint %q: want the rule's", denial.Message, denial.Hint)
	}
	if r.Calls.Total != 1 || r.Calls.Denied != 1 || r.Calls.OK != 0 {
		t.Errorf("calls = %+v, want 1 call, denied", r.Calls)
	}

	r = run(`["ping",{"n":12}]`)
	if string(r.Result) != "13" || r.Calls.OK != 1 || r.Calls.Denied != 0 {
		t.Errorf("ping 12: result %s, calls %+v; want 13, one ok call", r.Result, r.Calls)
	}

	// A misspelt tool: the same E_TOOL_UNKNOWN with a did-you-mean hint as
	// tools.get_expense() in JavaScript.
	r = run(`["get_expense",{}]`)
	var unknown sandbox.Error
	if err := json.Unmarshal(r.Result, &unknown); err != nil || unknown.Code != sandbox.EToolUnknown ||
		unknown.Hint == "" || !strings.Contains(unknown.Hint, "Did you mean tools.get_expenses") {
		t.Errorf("misspelt tool from WASM: %s", r.Result)
	}
}
