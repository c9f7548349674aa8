package js

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// TestPlanCases runs testdata/plan/*.txtar: program.js, and in the comment
// either plan: the JSON Plan must return, or expect: an error code (with
// message: a prefix of the error's message).
func TestPlanCases(t *testing.T) {
	files, err := filepath.Glob("testdata/plan/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no plan cases: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			c := loadCase(t, f)
			src, ok := c.files["program.js"]
			if !ok {
				t.Fatal("no program.js")
			}
			p, perr := Plan(src)
			if want := c.keys["expect"]; want != "" {
				if perr == nil || string(perr.Code) != want {
					t.Fatalf("Plan = %+v, %v; want %s", p, perr, want)
				}
				if m := c.keys["message"]; !strings.HasPrefix(perr.Message, m) {
					t.Fatalf("message %q does not start with %q", perr.Message, m)
				}
				return
			}
			if perr != nil {
				t.Fatal(perr)
			}
			got, _ := json.Marshal(p)
			var want sandbox.Plan
			if err := json.Unmarshal([]byte(c.keys["plan"]), &want); err != nil {
				t.Fatalf("bad plan key: %v", err)
			}
			wantJSON, _ := json.Marshal(want)
			if string(got) != string(wantJSON) {
				t.Fatalf("plan\n got %s\nwant %s", got, wantJSON)
			}
		})
	}
}

// TestPlanNesting: a program nested past MaxNesting is refused before the
// recursive parser sees it.
func TestPlanNesting(t *testing.T) {
	src := strings.Repeat("[", MaxNesting+1) + strings.Repeat("]", MaxNesting+1)
	if _, err := Plan(src); err == nil || err.Code != sandbox.ESourceLimit {
		t.Fatalf("err = %v, want E_SOURCE_LIMIT", err)
	}
}

// TestPlanCap: past MaxPlanTools distinct names, the rest count as dynamic.
func TestPlanCap(t *testing.T) {
	var b strings.Builder
	for i := 0; i < MaxPlanTools+5; i++ {
		b.WriteString("tools.t" + strconv.Itoa(i) + ";\n")
	}
	p, err := Plan(b.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tools) != MaxPlanTools || p.Dynamic != 5 {
		t.Fatalf("tools %d dynamic %d", len(p.Tools), p.Dynamic)
	}
}

// planBenchSource is a 5.5 KB program: 40 calls and loops.
var planBenchSource = strings.Repeat("{ const r = await tools.get_expenses({member_id: 'e1', quarter: 'Q3'});\nfor (const e of r) { if (e.amount > 10) console.log(e.category); } }\n", 40)

// BenchmarkPlan reads a plan; BenchmarkPlanCompile is what the engine does
// to the same text before it runs it (parse and compile, uncached), the
// yardstick of a plan's cost.
func BenchmarkPlan(b *testing.B) {
	b.SetBytes(int64(len(planBenchSource)))
	for b.Loop() {
		if _, err := Plan(planBenchSource); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanWalk is the walk alone, on a tree parsed once: what the
// engine adds to its compile to read the plan (it walks the tree it
// parsed to compile the program).
func BenchmarkPlanWalk(b *testing.B) {
	prg, err := parseProgram(planBenchSource)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(planBenchSource)))
	for b.Loop() {
		if _, _, err := planOf(prg, planBenchSource); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlanCompile(b *testing.B) {
	b.SetBytes(int64(len(planBenchSource)))
	for b.Loop() {
		if _, err := compileProgram(planBenchSource); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzPlan: any text gives a plan or an error, never a panic, and every
// name of a plan is one the text holds.
func FuzzPlan(f *testing.F) {
	for _, s := range []string{"tools.a()", "tools.call(`b`)", "const {x = tools[k]} = tools;", "class C { [tools.k] = 1 }"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Plan(src)
		if err != nil {
			if err.Code == sandbox.EInternal {
				t.Fatalf("internal error on %q", src)
			}
			return
		}
		for _, tool := range p.Tools {
			if tool.Name != "search_tools" && tool.Name != "describe_tools" && !strings.Contains(src, tool.Name) {
				t.Fatalf("plan names %q, not in %q", tool.Name, src)
			}
		}
	})
}

// TestSendPlan: with Job.SendPlan the engine hands the host the plan
// before the program runs, and a refusal (E_TOOL_DENIED) ends the run
// with no call made; any other answer lets it run. Without SendPlan, no
// plan is sent.
func TestSendPlan(t *testing.T) {
	src := "const a = await tools.ping({n: 1});\nreturn tools.call(\"echo\", {a});"
	var got []string
	answer := error(nil)
	host := sandboxtest.New(map[string]sandboxtest.Func{
		sandbox.PlanCall: func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
			got = append(got, string(args))
			return json.RawMessage("null"), answer
		}})
	e := New(Config{})
	run := func(send bool) *sandbox.Outcome {
		return e.Execute(context.Background(), &sandbox.Job{Program: sandbox.Program{Source: src}, Limits: sandbox.DefaultLimits(),
			Tools: []string{"ping", "echo"}, SendPlan: send}, host)
	}
	if out := run(true); out.Err != nil {
		t.Fatal(out.Err)
	}
	if len(got) != 1 || got[0] != `{"tools":[{"name":"ping","line":1},{"name":"echo","line":2}],"dynamic":0}` {
		t.Fatalf("sent %q", got)
	}
	calls := host.Calls()
	answer = &sandbox.Error{Code: sandbox.EToolDenied, Rule: "no", Message: "refused"}
	if out := run(true); out.Err == nil || out.Err.Rule != "no" || host.Calls() != calls+1 {
		t.Fatalf("refused: %+v, %d calls after %d", out.Err, host.Calls(), calls)
	}
	answer = &sandbox.Error{Code: sandbox.EToolUnknown, Message: "what plan?"}
	if out := run(true); out.Err != nil {
		t.Fatalf("a host that does not know the call: %v", out.Err)
	}
	n := len(got)
	if out := run(false); out.Err != nil || len(got) != n {
		t.Fatalf("without SendPlan: %v, %d plans", out.Err, len(got)-n)
	}
}
