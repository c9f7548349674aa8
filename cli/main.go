// Package cli is the sandcall command: its command table, flags and the
// wiring of each command over the packages that do the work. The binary
// (cmd/sandcall) is a few lines over [Main].
//
// The sandcall command is an MCP server for programmatic tool calling
// ("code mode"): a model submits a program through the run_code tool, the
// program calls allowlisted tools, the host authorizes every call, and
// only the program's result returns to the model.
//
// Usage, every command (TestPackageDocListsCommands checks this list
// against the command table):
//
//	sandcall serve    serve MCP over stdio (default) or streamable HTTP
//	sandcall run      run a program from a file or stdin and print its result
//	sandcall demo     run a demo (expense, the default, market, inbox or programs) and show what it saves
//	sandcall bench    measure the standard workloads in each isolation tier
//	sandcall policy   check, explain and test policy files
//	sandcall plan     print what a program will call, read before it runs; check it against a policy
//	sandcall tools    list, check, lint, search, describe and approve tools
//	sandcall audit    summarize an audit file: per-tool counts and latency, runs by code
//	sandcall token    hash a bearer token for the config file (reads stdin)
//	sandcall servers  list, test, trust, enable and disable upstream MCP servers (.mcp.json …)
//	sandcall doctor   report which isolation layers work on this machine
//	sandcall version  print the version
//
// Run `sandcall help` or `sandcall COMMAND --help` for details and examples.
// In serve mode the protocol owns stdout; everything else (logs, the
// "listening on" line) goes to stderr.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailure  = 1 // the program failed, or the server stopped on an error
	exitUsage    = 2 // bad command line or input
	exitInternal = 1
)

// env is what a command may touch: its streams and arguments. Tests run
// commands through the real binary; env keeps main small.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

func commands() []command {
	return []command{
		{"serve", "serve MCP over stdio (default) or streamable HTTP", cmdServe},
		{"run", "run a program from a file or stdin and print its result", cmdRun},
		{"demo", "run a demo (expense, the default, market, inbox or programs) and show what it saves", cmdDemo},
		{"bench", "measure the standard workloads in each isolation tier", cmdBench},
		{"policy", "check, explain and test policy files", cmdPolicy},
		{"plan", "print what a program will call, read before it runs; check it against a policy", cmdPlan},
		{"tools", "list, check, lint, search, describe and approve tools", cmdTools},
		{"audit", "summarize an audit file: per-tool counts and latency, runs by code", cmdAudit},
		{"token", "hash a bearer token for the config file (reads stdin)", cmdToken},
		{"servers", "list, test, trust, enable and disable upstream MCP servers (.mcp.json …)", cmdServers},
		{"doctor", "report which isolation layers work on this machine", cmdDoctor},
		{"version", "print the version", cmdVersion},
	}
}

// Main runs the sandcall command line args (without the program name)
// with the process's standard streams, and returns the exit code: 0 on
// success, 1 when a program or the server failed, 2 on a usage error.
// SIGINT and SIGTERM cancel the command's context.
func Main(args []string) int {
	setGCPercent()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal cancels ctx (serve drains, a run stops); a second
	// one ends the process at once, whatever it is doing.
	go func() { <-ctx.Done(); stop() }()
	return dispatch(ctx, &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}, args)
}

func dispatch(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			for _, c := range commands() {
				if c.name == args[1] {
					return c.run(ctx, e, []string{"--help"})
				}
			}
		}
		usage(e.stdout)
		return exitOK
	case "-version", "--version":
		return cmdVersion(ctx, e, nil)
	}
	if args[0] == "worker" { // hidden: the server starts it
		return cmdWorker(ctx, e, args[1:])
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "sandcall: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, `sandcall — an MCP server for programmatic tool calling ("code mode").

A model submits a JavaScript, TypeScript or WebAssembly program through the
run_code tool; the program calls allowlisted tools
(await tools.get_expenses({...})); sandcall authorizes every call and returns
only the program's result.

Usage:
  sandcall COMMAND [flags] [args]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Examples:
  sandcall serve --demo                        # stdio MCP server with the demo tools
  sandcall serve --demo --http 127.0.0.1:8080  # streamable HTTP at http://127.0.0.1:8080/mcp
  echo 'return 1 + 1' | sandcall run -         # run a program, print its result
  sandcall demo                                # the expense-check demo
  sandcall demo market                         # the market-report demo
  sandcall demo inbox                          # a prompt injection stopped by a flow rule
  sandcall demo programs                       # a saved program, a plan refused, state between runs

Run 'sandcall COMMAND --help' for a command's flags and examples.
`)
}

// newFlagSet returns a flag set whose usage text is the command's synopsis,
// its flags and its examples.
func newFlagSet(e *env, name, synopsis, examples string) *flag.FlagSet {
	fs := flag.NewFlagSet("sandcall "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: sandcall %s %s\n", name, synopsis)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprint(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
		if examples != "" {
			fmt.Fprintf(w, "\nExamples:\n%s", examples)
		}
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments
// (sandcall run prog.js --json); "--" ends the flags. It returns the
// positional arguments, or an exit code when parsing ended the command
// (--help: 0, with the usage on stdout; a bad flag: 2).
func parseFlags(e *env, fs *flag.FlagSet, args []string) ([]string, int, bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(e.stdout)
			fs.Usage()
			return nil, exitOK, false
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK, false
			}
			return nil, exitUsage, false
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, 0, true
}

// usageErr prints a usage error for the command and returns exitUsage.
func usageErr(e *env, fs *flag.FlagSet, format string, a ...any) int {
	fmt.Fprintf(e.stderr, "%s: %s\n", fs.Name(), fmt.Sprintf(format, a...))
	fmt.Fprintf(e.stderr, "Run '%s --help' for usage.\n", fs.Name())
	return exitUsage
}

// oneLine flattens s for a one-line message.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
