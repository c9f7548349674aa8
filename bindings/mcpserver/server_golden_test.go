package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/examples/expense"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the server's answers")

// A goldenStep is one tools/call of a transcript. Args may refer to the
// previous answer's output_ref as "$ref" and its output_next_offset as
// "$next".
type goldenStep struct {
	Tool string
	Args map[string]any
}

// TestGoldenTranscripts runs MCP conversations through a real server and a
// go-sdk client (in-memory transport) and compares every answer — isError,
// the structured content and the text content — with testdata/golden,
// after normalizing what changes from run to run (durations, run ids,
// output refs) and abbreviating long strings. A change to what a client
// sees shows in review; regenerate with:
//
//	go test ./bindings/mcpserver -run TestGoldenTranscripts -args -update
func TestGoldenTranscripts(t *testing.T) {
	// Over the 256 KiB result budget: cut, with an output_ref.
	big := make([]map[string]any, 6000)
	for i := range big {
		big[i] = map[string]any{"i": i, "s": strings.Repeat("é日\"\\x<&>", 6)}
	}
	transcripts := map[string][]goldenStep{
		"run_code": {
			{"run_code", map[string]any{"code": expense.Program}},
			{"run_code", map[string]any{"code": "return tools.get_budget_by_level({level: 'L9'})"}},
			{"run_code", map[string]any{"code": "return (", "timeout_ms": 1000}},
			{"run_code", map[string]any{"code": "console.log('hi'); progress({step: 1}); return input.n + 1", "input": map[string]any{"n": 41}}},
		},
		"direct_tool": {
			{"get_budget_by_level", map[string]any{"level": "L3"}},
			{"get_budget_by_level", map[string]any{"level": "L9"}},
			{"get_expenses", map[string]any{"member_id": "ENG-001", "quarter": "Q3", "extra": true}},
		},
		"read_output": {
			{"run_code", map[string]any{"code": "return input", "input": big}},
			{"read_output", map[string]any{"ref": "$ref", "offset": "$next", "limit": 200}},
			{"read_output", map[string]any{"ref": "no-such-ref", "offset": 0}},
		},
	}
	for name, steps := range transcripts {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, options{})
			var got []map[string]any
			var last map[string]any
			for _, st := range steps {
				args := map[string]any{}
				for k, v := range st.Args {
					switch v {
					case "$ref":
						v = last["output_ref"]
					case "$next":
						v = last["output_next_offset"]
					}
					args[k] = v
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: st.Tool, Arguments: args})
				cancel()
				if err != nil {
					t.Fatalf("%s: protocol error %v", st.Tool, err)
				}
				entry := map[string]any{"call": st.Tool, "args": normalize(st.Args), "is_error": res.IsError}
				if res.StructuredContent != nil {
					b, _ := json.Marshal(res.StructuredContent)
					var sc map[string]any
					_ = json.Unmarshal(b, &sc)
					last = sc
					entry["structured"] = normalize(sc)
				}
				var texts []any
				for _, c := range res.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						var v any
						if json.Unmarshal([]byte(tc.Text), &v) != nil {
							v = tc.Text
						}
						texts = append(texts, normalize(v))
					}
				}
				entry["text"] = texts
				got = append(got, entry)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(got); err != nil {
				t.Fatal(err)
			}
			b := buf.Bytes()
			file := filepath.Join("testdata", "golden", name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (generate with -update)", err)
			}
			if !bytes.Equal(want, b) {
				t.Errorf("%s differs from the server's answers; review, then regenerate with -update.\ngot:\n%s", file, b)
			}
		})
	}
}

// normalize replaces what changes between runs and abbreviates long
// strings and arrays, so that a golden file is stable and readable.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			switch {
			case strings.HasSuffix(k, "_ms"):
				out[k] = "<ms>"
			case k == "run_id" || k == "output_ref" || k == "ref":
				if s, ok := e.(string); ok && s != "" && s != "no-such-ref" {
					out[k] = "<" + k + ">"
				} else {
					out[k] = e
				}
			default:
				out[k] = normalize(e)
			}
		}
		return out
	case []any:
		if len(x) > 20 {
			return []any{normalize(x[0]), fmt.Sprintf("… %d items", len(x))}
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case []map[string]any:
		return fmt.Sprintf("<%d items>", len(x))
	case string:
		if len(x) > 160 {
			return fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(x[:120], ""), len(x))
		}
	}
	return v
}
