package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools/upstream"
)

const runExamples = `  # run a file against the demo tools; the result is printed as JSON, logs go to stderr
  sandcall run --demo examples/expense/program.js

  # read the program from stdin and pass it an input value
  echo 'return input.a + input.b' | sandcall run --input '{"a":1,"b":2}' -

  # print the whole result object, as run_code returns it
  sandcall run --demo --json prog.js

  # run TypeScript (inferred from .ts; types are stripped, not checked)
  sandcall run --demo examples/expense/program.ts

On a terminal, a progress line on stderr shows the calls done and in flight
while the program runs. The result is printed whole, even over the result
budget that run_code would cut it to.

Exit status: 0 on success, 1 when the program fails (the error code and
message, and the hint when there is one, go to stderr), 2 on a usage error.
`

// maxProgramFile caps what run reads from FILE or stdin: the largest program
// any limit admits (a WebAssembly module), plus one byte to detect overflow.
const maxProgramFile = 16<<20 + 1

func cmdRun(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "run", "[--demo] [--json] [--input JSON] [--timeout D] [--lang js|ts|wasm] FILE|-", runExamples)
	var c common
	c.register(fs)
	asJSON := fs.Bool("json", false, "print the whole result object (ok, result, logs, calls, error, ...) as JSON, as run_code returns it")
	input := fs.String("input", "", "a JSON value the program sees as `input`")
	lang := fs.String("lang", "js", "language of the program: js, ts (TypeScript: types are stripped, not checked; the default for a .ts FILE) or wasm for a WebAssembly module")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageErr(e, fs, "want exactly one FILE, or - for stdin")
	}
	if msg := c.loadConfig(fs); msg != "" {
		fmt.Fprintf(e.stderr, "sandcall run: %s\n", msg)
		return exitUsage
	}
	if msg := c.check(); msg != "" {
		return usageErr(e, fs, "%s", msg)
	}
	var prog sandbox.Program
	langSet := false
	fs.Visit(func(f *flag.Flag) { langSet = langSet || f.Name == "lang" })
	if !langSet && strings.HasSuffix(pos[0], ".ts") {
		*lang = "ts"
	}
	switch *lang {
	case "js", "javascript":
		prog.Language = sandbox.JavaScript
	case "wasm":
		prog.Language = sandbox.WASM
	case "ts", "typescript":
		prog.Language = sandbox.TypeScript
	default:
		return usageErr(e, fs, "unknown --lang %q: want js, ts or wasm", *lang)
	}
	if *input != "" {
		if !json.Valid([]byte(*input)) {
			return usageErr(e, fs, "--input is not valid JSON")
		}
		var b bytes.Buffer
		_ = json.Compact(&b, []byte(*input))
		prog.Input = b.Bytes()
	}
	src, err := readProgram(e, pos[0])
	if err != nil {
		return usageErr(e, fs, "%v", err)
	}
	if prog.Language == sandbox.WASM {
		prog.Module = src
	} else {
		prog.Source = string(src)
	}

	log := c.logger(e.stderr)
	c.oneShot = true
	c.needs = namedServers(src)
	// The worker starts (exec, runtime and package init, confinement)
	// while this process builds the catalog: on a machine with two cores
	// or more the two overlap instead of adding up.
	c.prestart(log)
	runner, closeRunner, err := newRunner(c.catalogTools(), &c, log)
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall run: %v\n", err)
		return exitFailure
	}
	defer func() { closeRunner() }() // closeRunner may be replaced below
	// The result is printed whole, however large: nothing pages it here.
	rr := bindings.RunRequest{Program: prog, Principal: principalOf(c.cfg), WholeResult: true}
	var line *progressLine
	if isTerminal(e.stderr) {
		line = newProgressLine(e.stderr, 100*time.Millisecond)
		rr.Progress = line.update
	}
	res := runner.Run(ctx, rr)
	if c.probeCached && c.pool != nil && c.pool.StartFailed() {
		// The cached confinement report no longer holds here (the worker
		// refused to start with it): probe afresh (and cache that) and run
		// once more.
		log.Info("the cached confinement probe failed; probing again")
		c.forgetProbe()
		closeRunner()
		if runner, closeRunner, err = newRunner(c.catalogTools(), &c, log); err != nil {
			fmt.Fprintf(e.stderr, "sandcall run: %v\n", err)
			return exitFailure
		}
		res = runner.Run(ctx, rr)
	}
	if line != nil {
		line.stop()
	}
	if *asJSON {
		b, err := json.Marshal(res)
		if err != nil {
			fmt.Fprintf(e.stderr, "sandcall run: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
	} else {
		for _, l := range res.Logs {
			fmt.Fprintln(e.stderr, l)
		}
		if res.Truncated {
			fmt.Fprintln(e.stderr, "(logs truncated)")
		}
		if res.OK {
			var b bytes.Buffer
			if err := json.Indent(&b, res.Result, "", "  "); err != nil {
				b.Reset()
				b.Write(res.Result)
			}
			fmt.Fprintf(e.stdout, "%s\n", b.Bytes())
		}
	}
	if !res.OK {
		printError(e.stderr, res.Error)
		return exitFailure
	}
	return exitOK
}

// printError prints "E_CODE: message" and the hint, if any.
func printError(w io.Writer, err *sandbox.Error) {
	if err == nil {
		err = sandbox.Errorf(sandbox.EInternal, "", "the run failed without an error")
	}
	fmt.Fprintf(w, "%s: %s\n", err.Code, err.Message)
	if err.Hint != "" {
		fmt.Fprintf(w, "hint: %s\n", err.Hint)
	}
}

// readProgram reads FILE, or stdin for "-", capped.
func readProgram(e *env, name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = e.stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxProgramFile))
	if err != nil {
		return nil, err
	}
	if len(b) >= maxProgramFile {
		return nil, fmt.Errorf("%s: the program is larger than %d bytes", name, maxProgramFile-1)
	}
	return b, nil
}

// namedServers picks the upstream servers a program names: those whose
// catalog prefix (<server>_, as in memory_read_graph) appears in its source
// or module. `sandcall run` starts only these, not every configured server;
// a program that builds tool names at run time must spell the prefix out
// somewhere (a comment will do).
func namedServers(src []byte) func(server string) bool {
	return func(server string) bool {
		return bytes.Contains(src, []byte(upstream.ToolPrefix(server)))
	}
}
