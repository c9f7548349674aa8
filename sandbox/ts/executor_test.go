package ts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/ts"
)

// echoHost answers every call with {"tool": name, "args": args}.
type echoHost struct{}

func (echoHost) Call(_ context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(fmt.Sprintf(`{"tool":%q,"args":%s}`, tool, args)), nil
}

func run(t *testing.T, ex sandbox.Executor, src string, lim sandbox.Limits) *sandbox.Outcome {
	t.Helper()
	out := ex.Execute(context.Background(), &sandbox.Job{
		Program: sandbox.Program{Language: sandbox.TypeScript, Source: src},
		Limits:  lim.Resolve(), Tools: []string{"lookup"},
	}, echoHost{})
	if out == nil {
		t.Fatal("nil outcome")
	}
	return out
}

// is reports whether err has code c (errors.Is needs a non-nil error).
func is(err *sandbox.Error, c sandbox.Code) bool { return err != nil && err.Code == c }

func newExec() *ts.Executor { return ts.New(ts.Config{JS: js.New(js.Config{})}) }

// TestInterfacesAndGenerics runs a program that uses the TypeScript that
// models write: interfaces, generics, type aliases, enums, parameter
// properties, assertions, non-null, satisfies, top-level await and return.
func TestInterfacesAndGenerics(t *testing.T) {
	src := `interface Row { id: number; name: string; tags?: string[] }
type Pair<A, B> = [A, B]
enum Level { Low = 1, High = 10 }
abstract class Base<T> {
  constructor(protected readonly items: T[]) {}
  abstract key(t: T): string
  group(): Record<string, T[]> {
    const out: Record<string, T[]> = {}
    for (const it of this.items) (out[this.key(it)] ??= []).push(it)
    return out
  }
}
class ByFirst extends Base<Row> {
  key(r: Row): string { return r.name[0]! }
}
function first<T extends { id: number }>(xs: readonly T[]): T | undefined {
  return xs.find((x): x is T => x.id > 0)
}
const rows: Row[] = [{ id: 1, name: "ada" }, { id: 2, name: "alan", tags: ["x"] }, { id: 3, name: "bob" }]
const res = await tools.lookup({ ids: rows.map(r => r.id) as number[] }) as { tool: string, args: { ids: number[] } }
const pair: Pair<string, number> = [res.tool, res.args.ids.length]
const cfg = { level: Level.High } satisfies { level: Level }
return { pair, groups: Object.keys(new ByFirst(rows).group()), first: first(rows)?.name, level: cfg.level, low: Level[1] }
`
	out := run(t, newExec(), src, sandbox.Limits{})
	if out.Err != nil {
		t.Fatalf("err = %v", out.Err)
	}
	want := `{"pair":["lookup",3],"groups":["a","b"],"first":"ada","level":10,"low":"Low"}`
	if string(out.Value) != want {
		t.Fatalf("value = %s, want %s", out.Value, want)
	}
}

// TestSyntaxErrorPosition checks that an esbuild error points at the
// submitted source's line and column (bytes from 1).
func TestSyntaxErrorPosition(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"let a: number = 1\nlet b = 2 x", `line 2, column 11: Expected ";" but found "x"`},
		{"interface P {\n  a: number\n}\nconst p: P = { a: 1 } x", `line 4, column 23: Expected ";" but found "x"`},
		{"let x = ;", "line 1, column 9: "},
		{`const s = "ü"; const = 1`, "line 1, column 23: "}, // ü is two bytes
		{"return {", "at end of program: "},
		{"import x from 'y'", "line 1, column 8: "},
		{"export const a = 1", "line 1, column 1: "},
	} {
		out := run(t, newExec(), tc.src, sandbox.Limits{})
		if !is(out.Err, sandbox.ESyntax) || !strings.HasPrefix(out.Err.Message, tc.want) || out.Err.Hint == "" {
			t.Errorf("%q: err = %v, want E_SYNTAX starting %q, with a hint", tc.src, out.Err, tc.want)
		}
	}
}

// TestRuntimeErrorPosition checks that an uncaught error's position, which
// the JavaScript engine reports in esbuild's output, is mapped back to the
// TypeScript source: esbuild drops type-only lines and reprints the rest.
func TestRuntimeErrorPosition(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"interface A {\n  x: number\n}\n\ntype B = A[]\n  throw new RangeError('bad')", "RangeError: bad (line 6:9)"},
		{"const s: string = \"ü\"; throw new Error(s)", "Error: ü (line 1:31)"},
		{"function f<T>(x: T): never {\n  // a comment\n  throw new TypeError(`no ${x}`)\n}\nconst n: number = 1\nf<number>(n)", "TypeError: no 1 (line 3:9)"},
		{"enum E { A }\nconst r = await tools.lookup({})\n\n\nnull!.x", "(line 5:7)"},
	} {
		out := run(t, newExec(), tc.src, sandbox.Limits{})
		if !is(out.Err, sandbox.EGuestError) || !strings.HasSuffix(out.Err.Message, tc.want) {
			t.Errorf("%q: err = %v, want E_GUEST_ERROR ending %q", tc.src, out.Err, tc.want)
		}
	}
}

// TestEngineSyntaxErrorMapped: esbuild passes decorators through and goja
// rejects them; the engine's position is mapped to the TypeScript.
func TestEngineSyntaxErrorMapped(t *testing.T) {
	out := run(t, newExec(), "type T = number\n\nconst n: T = 1\n@dec class B {}\nreturn n", sandbox.Limits{})
	if !is(out.Err, sandbox.ESyntax) || !strings.HasPrefix(out.Err.Message, "line 4, column 1: ") {
		t.Fatalf("err = %v, want E_SYNTAX at line 4, column 1", out.Err)
	}
}

func TestEscapeWrapper(t *testing.T) {
	out := run(t, newExec(), "}); globalThis.x = 1; (async () => {", sandbox.Limits{})
	if !is(out.Err, sandbox.ESyntax) {
		t.Fatalf("err = %v, want E_SYNTAX", out.Err)
	}
}

func TestLimits(t *testing.T) {
	// The source limit applies to the TypeScript: these types strip to
	// almost nothing, and the program is still refused.
	src := strings.Repeat("type T = { a: number }\n", 100) + "return 1"
	out := run(t, newExec(), src, sandbox.Limits{MaxSourceBytes: 1000})
	if !is(out.Err, sandbox.ESourceLimit) {
		t.Fatalf("err = %v, want E_SOURCE_LIMIT", out.Err)
	}
	out = run(t, newExec(), "return "+strings.Repeat("[", ts.MaxNesting+1), sandbox.Limits{})
	if !is(out.Err, sandbox.ESourceLimit) || !strings.Contains(out.Err.Message, "line 1") {
		t.Fatalf("err = %v, want E_SOURCE_LIMIT at line 1", out.Err)
	}
	// A JavaScript program larger than its TypeScript still runs: the
	// limit was applied to what was submitted.
	src = "enum E { " + strings.Repeat("A", 10) + " }\nreturn E[0]"
	out = run(t, newExec(), src, sandbox.Limits{MaxSourceBytes: len(src)})
	if out.Err != nil || string(out.Value) != `"AAAAAAAAAA"` {
		t.Fatalf("got %s, %v", out.Value, out.Err)
	}
}

// TestTranspileTimeout: esbuild's parser takes superlinear time on long
// chains of conditional arrows (about 0.7 s for 500 of them on the
// development machine); the transpile counts against the run's wall time.
func TestTranspileTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: leaves esbuild busy for a second after the test")
	}
	src := "const x = " + strings.Repeat("a ? (b) : (c) => ", 500) + "c"
	out := run(t, newExec(), src, sandbox.Limits{Timeout: 20 * time.Millisecond})
	if !is(out.Err, sandbox.ETimeout) || out.Err.Hint == "" {
		t.Fatalf("err = %v, want E_TIMEOUT with a hint", out.Err)
	}
}

// TestOtherLanguages: a job in another language goes to the JS executor
// as it is.
func TestOtherLanguages(t *testing.T) {
	ex := newExec()
	out := ex.Execute(context.Background(), &sandbox.Job{Program: sandbox.Program{Source: "return 1 + 1"},
		Limits: sandbox.DefaultLimits()}, echoHost{})
	if out.Err != nil || string(out.Value) != "2" {
		t.Fatalf("got %s, %v", out.Value, out.Err)
	}
	// TypeScript-only syntax is not JavaScript.
	out = ex.Execute(context.Background(), &sandbox.Job{Program: sandbox.Program{Source: "const a: number = 1"},
		Limits: sandbox.DefaultLimits()}, echoHost{})
	if !is(out.Err, sandbox.ESyntax) {
		t.Fatalf("err = %v, want E_SYNTAX", out.Err)
	}
}

// TestLanguagesMap wires the executor the way the server does.
func TestLanguagesMap(t *testing.T) {
	eng := js.New(js.Config{})
	langs := sandbox.Languages{sandbox.JavaScript: eng, sandbox.TypeScript: ts.New(ts.Config{JS: eng})}
	out := run(t, langs, "const xs: Array<number> = [1, 2, 3]\nreturn xs.reduce((a: number, b: number) => a + b, 0)", sandbox.Limits{})
	if out.Err != nil || string(out.Value) != "6" {
		t.Fatalf("got %s, %v", out.Value, out.Err)
	}
}

// TestAbandonedTranspilesAreBounded: a transpile abandoned at its run's
// deadline keeps its CPU until esbuild finishes (minutes for a long chain
// of '<' near the source limit). At most Config.MaxTranspiles run at once,
// so a few hostile programs cannot take every core of an in-process
// server: the next TypeScript run waits for a slot and, if none frees up
// by its deadline, ends with E_BUSY, while JavaScript is unaffected.
func TestAbandonedTranspilesAreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: leaves esbuild busy for a second after the test")
	}
	ex := ts.New(ts.Config{JS: js.New(js.Config{}), MaxTranspiles: 1})
	// About a quarter of a second of esbuild's time without -race (over
	// ten times the 20 ms deadline), several seconds with it.
	hostile := "return a" + strings.Repeat(" < a", 1500) + "\n"
	if out := run(t, ex, hostile, sandbox.Limits{Timeout: 20 * time.Millisecond}); !is(out.Err, sandbox.ETimeout) {
		t.Fatalf("hostile: err = %v, want E_TIMEOUT", out.Err)
	}
	out := run(t, ex, "const n: number = 1\nreturn n", sandbox.Limits{Timeout: 20 * time.Millisecond})
	if !is(out.Err, sandbox.EBusy) || out.Err.Hint == "" {
		t.Fatalf("while the slot is taken: err = %v, want E_BUSY with a hint", out.Err)
	}
	js := ex.Execute(context.Background(), &sandbox.Job{Program: sandbox.Program{Source: "return 2"},
		Limits: sandbox.DefaultLimits()}, echoHost{})
	if js.Err != nil || string(js.Value) != "2" {
		t.Fatalf("JavaScript: %s, %v", js.Value, js.Err)
	}
	// Once esbuild is done with the hostile program, the slot is free. A run
	// waits for the slot until its deadline; on 2 loaded cores under -race
	// the hostile transpile outlasted a minute, so a run that still finds
	// the slot taken (E_BUSY) is tried again, up to five minutes in all (a
	// hang guard, not a timing).
	for try := 1; ; try++ {
		out = run(t, ex, "const n: number = 1\nreturn n", sandbox.Limits{Timeout: time.Minute})
		if is(out.Err, sandbox.EBusy) && try < 5 {
			continue
		}
		if out.Err != nil || string(out.Value) != "1" {
			t.Fatalf("after the slot frees: %s, %v", out.Value, out.Err)
		}
		break
	}
}
