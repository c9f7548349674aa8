package cli

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRunCodeWasm runs a WebAssembly module through run_code over stdio in
// the process tier: first sent whole, then named by its SHA-256 only.
func TestRunCodeWasm(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile("../sandbox/wasm/testdata/call_tool.wasm") // calls ping({n: 41})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(mod)
	sha := hex.EncodeToString(sum[:])

	ctx, cs, _ := stdioSession(t, "serve", "--demo")
	run := func(args map[string]any) (ok bool, result, code string) {
		t.Helper()
		ok, result, code, _ = runOutcome(t, ctx, cs, args)
		return ok, result, code
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

// TestRunCodeLargeWasmOverStdio sends a 15 MB module (base64: 20 MB, more
// than the SDK's default 16 MiB stdio line) through run_code over stdio.
func TestRunCodeLargeWasmOverStdio(t *testing.T) {
	// Parallel: it spends most of its time waiting on a subprocess; the
	// package's parallel tests run together after the others.
	t.Parallel()
	heavy(t)
	mod, err := os.ReadFile("../sandbox/wasm/testdata/call_tool.wasm")
	if err != nil {
		t.Fatal(err)
	}
	// A custom section "pad" of 15 MB: id 0, size, name, payload.
	name, pad := []byte("pad"), make([]byte, 15<<20)
	body := append(append(uleb(uint64(len(name))), name...), pad...)
	mod = append(append(append(mod, 0), uleb(uint64(len(body)))...), body...)

	ctx, cs, _ := stdioSession(t, "serve", "--demo", "--isolation", "inprocess")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"language": "wasm", "module_base64": base64.StdEncoding.EncodeToString(mod)}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"result":42`) {
		t.Fatalf("large module: %.300s", b)
	}
}

func uleb(v uint64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, c|0x80)
			continue
		}
		return append(out, c)
	}
}
