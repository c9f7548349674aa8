package localtools_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	localtools "github.com/sandcall/sandcall/examples/local-tools"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/local"
)

func load(t *testing.T) (*tools.Catalog, []local.Finding) {
	t.Helper()
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	s, fs := local.Load(local.Config{Dir: localtools.Dir, Root: root})
	cat, err := tools.NewCatalog(demo.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	return cat, append(fs, s.AddTo(cat)...)
}

// TestCheck is what `sandcall tools check` reports for the example.
func TestCheck(t *testing.T) {
	_, fs := load(t)
	var got []string
	for _, f := range fs {
		got = append(got, f.String())
	}
	want := []string{
		`skip bad_param: parameter count: unknown type "int": want string, boolean, integer, number, array or object (line 3)`,
		`ok greet`,
		`skip has.dot: a dot in the name`,
		`skip no_description: no @description in the leading comment block`,
		`skip not_executable: not executable (chmod +x it)`,
		`ok word_stats`,
	}
	if len(got) != len(want) {
		t.Fatalf("findings:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("finding %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// TestProgram runs a program that calls a local script tool, the Python
// one and a demo tool at once, through the broker and the JS engine.
func TestProgram(t *testing.T) {
	cat, _ := load(t)
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	src := `const [g, p] = await Promise.all([
		tools.greet({name: "Ada", excited: true}),
		tools.ping({n: 41}),
	]);
	return {greeting: g.greeting, tool: g.tool, ping: p};`
	want := `{"greeting":"Hello, Ada!","tool":"greet","ping":42}`
	if _, err := exec.LookPath("python3"); err == nil {
		src = `const [g, p, w] = await Promise.all([
			tools.greet({name: "Ada", excited: true}),
			tools.ping({n: 41}),
			tools.word_stats({text: "to be or not to be", top: 1}),
		]);
		return {greeting: g.greeting, tool: g.tool, ping: p, words: w.words, top: w.top[0].word};`
		want = `{"greeting":"Hello, Ada!","tool":"greet","ping":42,"words":6,"top":"to"}`
	} else {
		t.Log("python3 is not installed: word_stats is not called")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := r.Run(ctx, bindings.RunRequest{Program: sandbox.Program{Source: src}})
	if !res.OK {
		t.Fatalf("run failed: %+v", res.Error)
	}
	var got, exp any
	_ = json.Unmarshal(res.Result, &got)
	_ = json.Unmarshal([]byte(want), &exp)
	gb, _ := json.Marshal(got)
	eb, _ := json.Marshal(exp)
	if string(gb) != string(eb) {
		t.Errorf("result = %s, want %s", res.Result, want)
	}
	if res.Calls.ByTool["greet"] != 1 || res.Calls.ByTool["ping"] != 1 {
		t.Errorf("calls = %+v", res.Calls)
	}
}

// TestWordStatsPython calls the Python tool directly.
func TestWordStatsPython(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the word_stats script needs it")
	}
	cat, _ := load(t)
	tool, ok := cat.Lookup("word_stats")
	if !ok {
		t.Fatal("no word_stats")
	}
	res, err := tool.Call(context.Background(), json.RawMessage(`{"text":"a b a"}`))
	if err != nil || string(res) != `{"words":3,"top":[{"word":"a","count":2},{"word":"b","count":1}]}` {
		t.Errorf("word_stats = %s, %v", res, err)
	}
}
