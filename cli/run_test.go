package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/examples/expense"
)

func TestRun(t *testing.T) {
	t.Parallel()
	prog := writeProgram(t)
	check := func(stdout string) {
		t.Helper()
		var r struct {
			OK     bool            `json:"ok"`
			Result json.RawMessage `json:"result"`
			Calls  struct {
				Total  int            `json:"total"`
				ByTool map[string]int `json:"by_tool"`
			} `json:"calls"`
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("--json output %q: %v", stdout, err)
		}
		sum := sha256.Sum256(r.Result)
		if !r.OK || r.Calls.Total != 56 || r.Calls.ByTool["get_expenses"] != 50 || r.RunID == "" || hex.EncodeToString(sum[:]) != summarySHA256 {
			t.Fatalf("run = %+v", r)
		}
	}
	t.Run("file", func(t *testing.T) {
		stdout, stderr, code := sandcall(t, "", "run", "--demo", "--json", prog)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		check(stdout)
	})
	t.Run("stdin, flags after the file", func(t *testing.T) {
		stdout, stderr, code := sandcall(t, expense.Program, "run", "-", "--demo", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		check(stdout)
	})
	t.Run("pretty result and logs", func(t *testing.T) {
		stdout, stderr, code := sandcall(t, `console.log("hello", input.x); return {b: 1, a: [input.x]}`, "run", "--input", `{"x": 2}`, "-")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if want := "{\n  \"b\": 1,\n  \"a\": [\n    2\n  ]\n}\n"; stdout != want {
			t.Fatalf("stdout %q, want %q", stdout, want)
		}
		if !strings.Contains(stderr, "hello 2") {
			t.Fatalf("stderr %q lacks the log line", stderr)
		}
	})
	t.Run("program error", func(t *testing.T) {
		stdout, stderr, code := sandcall(t, `return await tools.get_budget_by_level({level: "L9"})`, "run", "--demo", "-")
		if code != 1 || stdout != "" {
			t.Fatalf("exit %d, stdout %q", code, stdout)
		}
		if !regexp.MustCompile(`(?m)^E_TOOL_ARGS: .+\nhint: .+`).MatchString(stderr) {
			t.Fatalf("stderr %q", stderr)
		}
	})
	t.Run("program error as json", func(t *testing.T) {
		stdout, _, code := sandcall(t, `throw new Error("boom")`, "run", "--json", "-")
		var r struct {
			OK    bool `json:"ok"`
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if code != 1 || json.Unmarshal([]byte(stdout), &r) != nil || r.OK || r.Error.Code != "E_GUEST_ERROR" {
			t.Fatalf("exit %d, stdout %q", code, stdout)
		}
	})
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no file", []string{"run"}},
		{"two files", []string{"run", "a.js", "b.js"}},
		{"missing file", []string{"run", filepath.Join(t.TempDir(), "nope.js")}},
		{"bad input", []string{"run", "--input", "{", "-"}},
		{"unknown flag", []string{"run", "--frobnicate", "-"}},
		{"unknown language", []string{"run", "--lang", "cobol", "-"}},
		{"bad timeout", []string{"run", "--timeout", "5m", "-"}},
	} {
		t.Run("usage: "+c.name, func(t *testing.T) {
			_, stderr, code := sandcall(t, "return 1", c.args...)
			if code != 2 || stderr == "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
		})
	}
}

// TestRunPrintsWholeResult: `sandcall run` prints a result over the budget
// whole (run_code would cut it), with and without --json.
func TestRunPrintsWholeResult(t *testing.T) {
	t.Parallel()
	src := `return "x".repeat(300000)`
	out, errOut, code := sandcall(t, src, "run", "-")
	if code != 0 || len(strings.TrimSpace(out)) != 300002 {
		t.Fatalf("exit %d, %d bytes out, stderr %q", code, len(out), errOut)
	}
	out, _, code = sandcall(t, src, "run", "--json", "-")
	var r struct {
		OK        bool   `json:"ok"`
		Result    string `json:"result"`
		Truncated bool   `json:"truncated"`
		OutputRef string `json:"output_ref"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	if !r.OK || len(r.Result) != 300000 || r.Truncated || r.OutputRef != "" {
		t.Errorf("--json: ok %v, %d-byte result, truncated %v, ref %q", r.OK, len(r.Result), r.Truncated, r.OutputRef)
	}
}
