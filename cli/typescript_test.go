package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/examples/expense"
)

// TestRunTypeScript runs examples/expense/program.ts with the real binary,
// in both tiers: the language comes from the .ts extension, the result is
// program.js's.
func TestRunTypeScript(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "program.ts")
	if err := os.WriteFile(p, []byte(expense.ProgramTS), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, iso := range []string{"process", "inprocess"} {
		stdout, stderr, code := sandcall(t, "", "run", "--demo", "--json", "--isolation", iso, p)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", iso, code, stderr)
		}
		var res struct {
			OK     bool            `json:"ok"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(res.Result)
		if !res.OK || hex.EncodeToString(sum[:]) != summarySHA256 {
			t.Fatalf("%s: ok %v, result %.100s", iso, res.OK, res.Result)
		}
	}
}

// TestRunTypeScriptErrors checks, in the process tier, that errors point at
// the TypeScript: a syntax error at its line and column, an uncaught error
// at the line it was thrown from although esbuild drops the type lines.
func TestRunTypeScriptErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, want string }{
		{"let a: number = 1\nlet b = 2 x", `E_SYNTAX: line 2, column 11: Expected ";" but found "x"`},
		{"interface A {\n  x: number\n}\n\ntype B = A[]\n  throw new RangeError('bad')", "E_GUEST_ERROR: Uncaught RangeError: bad (line 6:9)"},
	} {
		_, stderr, code := sandcall(t, tc.src, "run", "--lang", "ts", "-")
		if code != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "hint: ") {
			t.Errorf("%q: exit %d, stderr %q; want 1 and %q with a hint", tc.src, code, stderr, tc.want)
		}
	}
	// esbuild's parser is slow on this shape and cannot be interrupted; the
	// worker transpiling it is killed at the deadline.
	src := "const x = " + strings.Repeat("a ? (b) : (c) => ", 2000) + "c"
	_, stderr, code := sandcall(t, src, "run", "--lang", "ts", "--timeout", "1s", "-")
	if code != 1 || !strings.Contains(stderr, "E_TIMEOUT") {
		t.Errorf("pathological TypeScript: exit %d, stderr %q; want 1 and E_TIMEOUT", code, stderr)
	}
	_, stderr, code = sandcall(t, "return 1", "run", "--lang", "coffee", "-")
	if code != 2 || !strings.Contains(stderr, "want js, ts or wasm") {
		t.Errorf("--lang coffee: exit %d, stderr %q", code, stderr)
	}
}

// TestServeTypeScript sends program.ts to run_code with language
// "typescript" over stdio, as a model would.
func TestServeTypeScript(t *testing.T) {
	t.Parallel()
	ctx, cs, _ := stdioSession(t, "serve", "--demo")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code",
		Arguments: map[string]any{"code": expense.ProgramTS, "language": "typescript"}})
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, res)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code",
		Arguments: map[string]any{"code": "const a: number = 1\nreturn a +", "language": "typescript"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !res.IsError || !strings.Contains(string(b), `"code":"E_SYNTAX"`) || !strings.Contains(string(b), "at end of program") {
		t.Fatalf("syntax error: isError %v, %s", res.IsError, b)
	}
}
