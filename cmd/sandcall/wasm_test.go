package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRunCodeWasm runs a WebAssembly module through run_code over stdio in
// the process tier: first sent whole, then named by its SHA-256 only.
func TestRunCodeWasm(t *testing.T) {
	mod, err := os.ReadFile("../../sandbox/wasm/testdata/call_tool.wasm") // calls ping({n: 41})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(mod)
	sha := hex.EncodeToString(sum[:])

	cmd := exec.Command(bin, "serve", "--demo")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	t.Cleanup(func() { kill(cmd) })
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	run := func(args map[string]any) (ok bool, result, code string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			OK     bool            `json:"ok"`
			Result json.RawMessage `json:"result"`
			Tier   string          `json:"tier"`
			Error  *struct{ Code string }
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if r.Error != nil {
			code = r.Error.Code
		}
		return r.OK, string(r.Result), code
	}
	if ok, res, code := run(map[string]any{"language": "wasm", "module_base64": base64.StdEncoding.EncodeToString(mod)}); !ok || res != "42" {
		t.Fatalf("module_base64: ok %v, result %s, code %s", ok, res, code)
	}
	if ok, res, code := run(map[string]any{"language": "wasm", "module_sha256": sha}); !ok || res != "42" {
		t.Fatalf("module_sha256: ok %v, result %s, code %s", ok, res, code)
	}
	other := "0000000000000000000000000000000000000000000000000000000000000000"
	if ok, _, code := run(map[string]any{"language": "wasm", "module_sha256": other}); ok || code != "E_MODULE_INVALID" {
		t.Fatalf("unknown module_sha256: ok %v, code %s", ok, code)
	}
	if ok, _, code := run(map[string]any{"language": "wasm", "module_base64": base64.StdEncoding.EncodeToString([]byte("\x00asm junk"))}); ok || code != "E_MODULE_INVALID" {
		t.Fatalf("malformed module: ok %v, code %s", ok, code)
	}
}
