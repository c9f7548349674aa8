package parity

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/internal/txtar"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/wasm"
)

// errorJSON is prepended to every JavaScript program: it renders a caught
// ToolError as the error JSON of bindings/abi.md (the fields of
// sandbox.Error, empty ones omitted), which is what a WebAssembly guest
// reads after a status-1 wait.
const errorJSON = `const errorJSON = (e) => {
  const o = { code: e.code, message: e.message }
  if (e.hint) o.hint = e.hint
  if (e.retryable) o.retryable = true
  if (e.tool) o.tool = e.tool
  if (e.path) o.path = e.path
  if (e.allowed_values) o.allowed_values = e.allowed_values
  if (e.rule) o.rule = e.rule
  return o
}
`

// parityCase is one testdata/*.txtar.
type parityCase struct {
	name   string
	js     string
	module []byte
	input  json.RawMessage
	host   *fakeHost
	limits sandbox.Limits
	want   string // "ok:JSON" or a code
}

func loadCase(t *testing.T, path string) parityCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := txtar.Parse(string(data))
	c := parityCase{name: strings.TrimSuffix(filepath.Base(path), ".txtar")}
	for _, f := range []string{"js", "wasm", "want"} {
		if strings.TrimSpace(a.Files[f]) == "" {
			t.Fatalf("%s: no -- %s -- section", path, f)
		}
	}
	c.js = errorJSON + a.Files["js"]
	c.want = strings.TrimSpace(a.Files["want"])
	c.module = readModule(t, strings.TrimSpace(a.Files["wasm"]))
	if in := strings.TrimSpace(a.Files["input"]); in != "" {
		c.input = json.RawMessage(in)
	}
	c.host, err = parseHost(a.Files["host"])
	if err != nil {
		t.Fatalf("%s: host: %v", path, err)
	}
	c.limits = sandbox.DefaultLimits()
	// A case that does not test the wall clock gets one sized for -race
	// on two loaded cores (stack/wasm-compiler took over 10 s there); it
	// costs nothing when the run ends on time.
	c.limits.Timeout = 2 * time.Minute
	for _, line := range strings.Split(a.Comment, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "timeout" {
			if c.limits.Timeout, err = time.ParseDuration(v); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			continue
		}
		fields := map[string]*int{"max_calls": &c.limits.MaxCalls, "max_result_bytes": &c.limits.MaxResultBytes, "max_log_bytes": &c.limits.MaxLogBytes}
		p, ok := fields[k]
		if !ok {
			t.Fatalf("%s: unknown key %q", path, k)
		}
		if *p, err = strconv.Atoi(v); err != nil {
			t.Fatalf("%s: %s: %v", path, k, err)
		}
	}
	return c
}

// readModule reads testdata/wasm/name.wasm.
func readModule(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "wasm", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// engine is one engine the cases run on.
type engine struct {
	name string
	exec sandbox.Executor
	lang sandbox.Language
}

func engines(t *testing.T) []engine {
	es := []engine{{name: "js", exec: js.New(js.Config{}), lang: sandbox.JavaScript}}
	add := func(name string, cfg wasm.Config) {
		w, err := wasm.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close(context.Background()) })
		es = append(es, engine{name: name, exec: w, lang: sandbox.WASM})
	}
	add("wasm-interpreter", wasm.Config{})
	switch {
	case testing.Short():
		t.Log("-short: the WebAssembly compiler is not run")
	case runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64":
		t.Logf("wazero has no compiler for %s", runtime.GOARCH)
	default:
		add("wasm-compiler", wasm.Config{Compiler: true, CompileTimeout: time.Minute})
	}
	return es
}

// outcomeString is "ok:JSON" or the error's code.
func outcomeString(o *sandbox.Outcome) string {
	if o.Err != nil {
		return string(o.Err.Code)
	}
	return "ok:" + string(o.Value)
}

func TestParity(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatal("no cases", err)
	}
	exc := loadExceptions(t)
	names := map[string]bool{}
	es := engines(t)
	for _, path := range paths {
		c := loadCase(t, path)
		names[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			for _, e := range es {
				t.Run(e.name, func(t *testing.T) {
					t.Parallel()
					job := &sandbox.Job{RunID: "parity", Limits: c.limits, Tools: c.host.names(),
						Program: sandbox.Program{Language: e.lang, Input: c.input}}
					if e.lang == sandbox.WASM {
						job.Program.Module = c.module
					} else {
						job.Program.Source = c.js
					}
					o := e.exec.Execute(context.Background(), job, c.host)
					got := outcomeString(o)
					x, listed := exc.find(c.name, e.name)
					switch {
					case got == c.want && listed:
						t.Errorf("exceptions.txt lists %s on %s (%s), but it now gives %s as wanted: remove the exception", c.name, e.name, x.outcome, got)
					case got == c.want:
					case listed && got == x.outcome:
						t.Logf("known difference: %s (%s)", got, x.why)
					case listed:
						t.Errorf("got %s, want %s; exceptions.txt expects %s", got, c.want, x.outcome)
					default:
						msg := ""
						if o.Err != nil {
							msg = fmt.Sprintf(" (%s; hint %q)", o.Err.Message, o.Err.Hint)
						}
						t.Errorf("got %s%s, want %s; logs %q", got, msg, c.want, o.Logs)
					}
					if o.Err != nil {
						checkClean(t, o.Err)
					}
				})
			}
		})
	}
	for _, x := range exc {
		if !names[x.kase] {
			t.Errorf("exceptions.txt:%d: no case %q", x.line, x.kase)
		}
	}
}

// checkClean fails if an error's text shows Go or host internals.
func checkClean(t *testing.T, e *sandbox.Error) {
	t.Helper()
	if len(e.Message) > sandbox.MaxMessageBytes || len(e.Hint) > sandbox.MaxMessageBytes {
		t.Errorf("message or hint over %d bytes", sandbox.MaxMessageBytes)
	}
	for _, bad := range []string{"goroutine ", ".go:", "github.com/", "/root", "/home", "/work", "wazero", "goja", "runtime error"} {
		if strings.Contains(e.Message, bad) || strings.Contains(e.Hint, bad) {
			t.Errorf("error text contains %q: %v", bad, e)
		}
	}
}

// exception is one line of testdata/exceptions.txt.
type exception struct {
	line                       int
	kase, engine, outcome, why string
}

type exceptions []exception

// find returns the exception for a case on an engine; "wasm" names both
// WebAssembly engines.
func (xs exceptions) find(kase, engine string) (exception, bool) {
	for _, x := range xs {
		if x.kase == kase && (x.engine == engine || x.engine == "wasm" && strings.HasPrefix(engine, "wasm-")) {
			return x, true
		}
	}
	return exception{}, false
}

func loadExceptions(t *testing.T) exceptions {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "exceptions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var xs exceptions
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, "|", 4)
		for j := range f {
			f[j] = strings.TrimSpace(f[j])
		}
		if len(f) != 4 || f[3] == "" {
			t.Fatalf("exceptions.txt:%d: want \"case | engine | outcome | why\", with a reason", i+1)
		}
		if !slices.Contains([]string{"js", "wasm", "wasm-interpreter", "wasm-compiler"}, f[1]) {
			t.Fatalf("exceptions.txt:%d: unknown engine %q", i+1, f[1])
		}
		xs = append(xs, exception{line: i + 1, kase: f[0], engine: f[1], outcome: f[2], why: f[3]})
	}
	return xs
}

// TestModulesBuilt checks that every committed .wasm is what its .wat
// builds to, with the command in the .wat's comment (when wat2wasm is
// installed).
func TestModulesBuilt(t *testing.T) {
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Skip("wat2wasm (wabt) is not installed")
	}
	wats, _ := filepath.Glob("testdata/wasm/*.wat")
	if len(wats) == 0 {
		t.Fatal("no .wat files")
	}
	dir := t.TempDir()
	for _, w := range wats {
		src, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(w), ".wat")
		if !bytes.Contains(src, []byte("wat2wasm --enable-all --no-check "+base+".wat -o "+base+".wasm")) {
			t.Errorf("%s: no build command in its comment", w)
		}
		out := filepath.Join(dir, base+".wasm")
		if b, err := exec.Command(wat2wasm, "--enable-all", "--no-check", w, "-o", out).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", w, err, b)
		}
		built, _ := os.ReadFile(out)
		committed, err := os.ReadFile(strings.TrimSuffix(w, ".wat") + ".wasm")
		if err != nil || !bytes.Equal(built, committed) {
			t.Errorf("%s.wasm is not what %s builds to: run go generate ./sandbox/parity", base, w)
		}
	}
}
