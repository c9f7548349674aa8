package plan

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
)

func planJSON(t *testing.T, p sandbox.Plan) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestJavaScriptCached(t *testing.T) {
	src := "const a = await tools.get_team_members({});\nreturn tools.call(\"get_expenses\", a);"
	p1, err := Of(sandbox.Program{Source: src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools":[{"name":"get_team_members","line":1},{"name":"get_expenses","line":2}],"dynamic":0}`
	if got := planJSON(t, p1); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	p1.Tools[0].Name = "changed" // a caller's copy: the cache is not affected
	p2, _ := Of(sandbox.Program{Language: sandbox.JavaScript, Source: src}, nil)
	if got := planJSON(t, p2); got != want {
		t.Fatalf("second plan %s", got)
	}
}

// TestTypeScriptLines: the lines are the TypeScript source's, though the
// type declarations take lines of their own and esbuild drops them.
func TestTypeScriptLines(t *testing.T) {
	src := `interface Member {
  id: string;
  level: string;
}
type Budget = { travel_limit: number };
const team: Member[] = await tools.get_team_members({ department: "engineering" });

const budgets: Budget[] = await Promise.all(
  team.map((m: Member) => tools.get_budget_by_level({ level: m.level })),
);
const fn: (s: string) => Promise<unknown> = (s) => tools[s]({});
return budgets;`
	p, err := Of(sandbox.Program{Language: sandbox.TypeScript, Source: src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools":[{"name":"get_team_members","line":6},{"name":"get_budget_by_level","line":9}],"dynamic":1}`
	if got := planJSON(t, p); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if _, err := Of(sandbox.Program{Language: sandbox.TypeScript, Source: "const x: = 1;"}, nil); err == nil || err.Code != sandbox.ESyntax {
		t.Fatalf("a TypeScript syntax error: %v", err)
	}
}

// TestModule reads a module wat2wasm built (the parity fan-out: 100 calls
// of ping through call_async).
func TestModule(t *testing.T) {
	m, err := os.ReadFile("../parity/testdata/wasm/fanout.wasm")
	if err != nil {
		t.Fatal(err)
	}
	p, perr := Of(sandbox.Program{Language: sandbox.WASM, Module: m}, []string{"ping", "pong", "get_expenses"})
	if perr != nil {
		t.Fatal(perr)
	}
	want := `{"tools":[{"name":"ping"}],"dynamic":1,"imports":["sandcall.call_async","sandcall.wait","sandcall.result_len","sandcall.result_read"]}`
	if got := planJSON(t, p); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	// Without a catalog, no names are looked for.
	p, _ = Of(sandbox.Program{Language: sandbox.WASM, Module: m}, nil)
	if len(p.Tools) != 0 || p.Tools == nil {
		t.Fatalf("tools %v", p.Tools)
	}
}

func TestModuleInvalid(t *testing.T) {
	for name, m := range map[string][]byte{
		"empty":     nil,
		"magic":     []byte("\x00asx\x01\x00\x00\x00"),
		"overrun":   []byte("\x00asm\x01\x00\x00\x00\x0b\x7f"),
		"bad data":  []byte("\x00asm\x01\x00\x00\x00\x0b\x03\x01\x09\x00"),
		"bad names": []byte("\x00asm\x01\x00\x00\x00\x02\x05\x01\x02\xff\xfe\x00"),
	} {
		if _, err := Module(m, []string{"x"}); err == nil || err.Code != sandbox.EModuleInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestModuleDataPacked: a name packed between other strings (as Go's
// linker lays them out) is found; one that is not a known tool is not.
func TestModuleDataPacked(t *testing.T) {
	data := "engineeringget_expensesQ3send_emailx"
	seg := append([]byte{0x00, 0x41, 0x00, 0x0b, byte(len(data))}, data...)
	sec := append([]byte{0x01}, seg...)
	m := append([]byte("\x00asm\x01\x00\x00\x00\x0b"), byte(len(sec)))
	m = append(m, sec...)
	p, err := Module(m, []string{"get_expenses", "send_email", "get_team_members"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Names(), ","); got != "get_expenses,send_email" || p.Dynamic != 0 {
		t.Fatalf("got %s dynamic %d", got, p.Dynamic)
	}
}
