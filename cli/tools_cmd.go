package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/local"
	"github.com/sandcall/sandcall/tools/upstream"
)

const toolsUsage = `Usage: sandcall tools check [--tools-dir D]
       sandcall tools list [--demo] [--tools-dir D] [--json]
       sandcall tools approve [--audit F] NAME [NAME...]
       sandcall tools search [--demo] [--tools-dir D] [--policy F] [--limit N] [--json] QUERY
       sandcall tools describe [--demo] [--tools-dir D] [--policy F] [--json] NAME...
       sandcall tools lint [--demo] [--tools-dir D] [--json]

check  list every candidate file of the local tools directory (default:
       ` + local.DefaultDir + ` in the working directory) and say why it was
       accepted or skipped: "ok NAME" or "skip FILE: reason (line N)".
       Exit 1 when a file was skipped: every file there is meant to be a tool,
       so a skip (a missing executable bit included) is an error.
list   show every tool with its source (builtin, local or a server's name),
       the callers the default policy lets call it, and its status
approve  accept the current definition of upstream tools whose definition
       changed (NAME is <server>_<tool>); see .sandcall/pins.json
search   rank the tools for a task in words, as search_tools does for the
       model: name, callers, summary and one-line TypeScript signature
describe print the tools' TypeScript declarations, as describe_tools does
lint   check every tool against the catalog standard (names, descriptions,
       schemas, output schema and budget, effects); errors and warnings with
       file:line where a definition has one; exit 1 on any error. Upstream
       tools' findings are warnings.

Examples:
  sandcall tools check
  sandcall tools check --tools-dir examples/local-tools/.agents/tools
  sandcall tools list --demo
  sandcall tools search --demo "travel budget of an employee level"
  sandcall tools describe --demo get_expenses
  sandcall tools lint --demo
`

func cmdTools(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, toolsUsage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(e.stdout, toolsUsage)
		return exitOK
	case "check":
		return toolsCheck(e, args[1:])
	case "list":
		return toolsList(e, args[1:])
	case "approve": // tools_approve.go
		return toolsApprove(ctx, e, args[1:])
	case "search": // tools_discover.go
		return toolsSearch(ctx, e, args[1:])
	case "describe": // tools_discover.go
		return toolsDescribe(ctx, e, args[1:])
	case "lint": // tools_lint.go
		return toolsLint(e, args[1:])
	}
	fmt.Fprintf(e.stderr, "sandcall tools: unknown subcommand %q\n\n%s", args[0], toolsUsage)
	return exitUsage
}

// registerTools registers the local-tools flags of serve and run.
func (c *common) registerTools(fs *flag.FlagSet) {
	fs.StringVar(&c.toolsDir, "tools-dir", "",
		"directory of local script tools (default: "+local.DefaultDir+" in the working directory, if present); reloaded when it changes")
	fs.DurationVar(&c.toolsTimeout, "tools-timeout", local.DefaultTimeout, "time limit of one local script tool call")
	fs.BoolVar(&c.trustProject, "trust-project", false,
		"start the project's MCP servers and use its "+local.DefaultDir+" scripts without 'sandcall servers trust' (CI, a checkout you own)")
	fs.Var(&c.mcpFiles, "mcp-config", "read upstream MCP servers from FILE only (repeatable), not from the project's .mcp.json and friends: a file only sandcall reads, when the client's config lists sandcall itself")
	fs.Var(&c.envPass, "env", "pass the variable NAME of this environment to local script tools and stdio upstream servers (repeatable; adds to env_passthrough in the config file)")
}

// localDir returns the local tools directory and whether there is one: dir
// if set, else .agents/tools in the working directory when it exists.
func localDir(dir string) (string, bool) {
	if dir != "" {
		return dir, true
	}
	if fi, err := os.Stat(local.DefaultDir); err == nil && fi.IsDir() {
		return local.DefaultDir, true
	}
	return "", false
}

// localTools loads the local tools directory, if any, logs what was
// skipped, and keeps the Set for watchLocalTools. A local tool whose name
// another tool of ts already has loses and is reported.
func (c *common) localTools(ts []*tools.Tool) []*tools.Tool {
	dir, ok := localDir(c.toolsDir)
	if !ok {
		return ts
	}
	log := c.logger(os.Stderr)
	set, fs := local.Load(local.Config{Dir: dir, Timeout: c.toolsTimeout, Logger: log, Env: c.passEnv(), Reserved: reservedNames(c.upstreamConfig()),
		Trusted: scriptTrust(c.trustProject, c.toolsDir != "")})
	c.localFinds = fs
	for _, f := range fs {
		if f.Reason != "" {
			log.Warn("local tool skipped", "file", f.File, "reason", f.Reason, "line", f.Line)
		}
	}
	c.localSet = set
	taken := map[string]bool{}
	for _, t := range ts {
		taken[t.Name] = true
	}
	for _, t := range set.Tools() {
		if taken[t.Name] {
			c.localFinds = append(c.localFinds, local.Finding{File: t.Name, Tool: t.Name, Reason: "collision: a tool named " + t.Name + " already exists"})
			log.Warn("local tool skipped", "file", t.Name, "reason", "collision: a tool named "+t.Name+" already exists")
			continue
		}
		ts = append(ts, t)
	}
	return ts
}

// watchLocalTools keeps cat in step with the local tools directory (polled
// every second) until the runner is closed.
func (c *common) watchLocalTools(cat *tools.Catalog) {
	if c.localSet == nil {
		return
	}
	c.localSet.AddTo(cat) // adopts the tools already there; collisions were logged
	ctx, cancel := context.WithCancel(context.Background())
	go c.localSet.Watch(ctx, time.Second)
	c.closers = append(c.closers, cancel)
}

func toolsCheck(e *env, args []string) int {
	fs := newFlagSet(e, "tools check", "[--tools-dir D] [--demo]", "  sandcall tools check\n")
	dir := fs.String("tools-dir", "", "local tools directory (default: "+local.DefaultDir+")")
	fs.StringVar(dir, "dir", "", "same as --tools-dir")
	demoFlag := fs.Bool("demo", false, "also report collisions with the embedded demo tools")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErr(e, fs, "unexpected argument %q", pos[0])
	}
	d := *dir
	if d == "" {
		d = local.DefaultDir
	}
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		fmt.Fprintf(e.stderr, "sandcall tools check: no directory %s\n", d)
		return exitFailure
	}
	set, finds := local.Load(local.Config{Dir: d, Reserved: reservedNames(upstream.LoadConfig{Root: "."})})
	var ts []*tools.Tool
	if *demoFlag {
		ts = demo.Tools()
	}
	cat, err := tools.NewCatalog(ts...)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return exitInternal
	}
	collided := map[string]local.Finding{}
	for _, f := range set.AddTo(cat) {
		collided[f.File] = f
	}
	if len(finds) == 0 {
		fmt.Fprintf(e.stderr, "no candidate files in %s\n", d)
	}
	status := exitOK
	for _, f := range finds {
		if c, ok := collided[f.File]; ok {
			f = c
		}
		fmt.Fprintln(e.stdout, f.String())
		if f.Error {
			status = exitFailure
		}
	}
	return status
}

// toolRow is one line of tools list.
type toolRow struct {
	Name    string   `json:"name"`
	Source  string   `json:"source"`
	Callers []string `json:"callers"`
	Status  string   `json:"status"`
}

func toolsList(e *env, args []string) int {
	fs := newFlagSet(e, "tools list", "[--demo] [--tools-dir D] [--policy F] [--json]", "  sandcall tools list --demo\n")
	var c common
	c.catalogFlags(fs, "show the callers this policy allows (default: the config file's, else the default policy)")
	asJSON := fs.Bool("json", false, "print a JSON array of {name, source, callers, status}")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErr(e, fs, "unexpected argument %q", pos[0])
	}
	// Skipped local files and disabled upstream tools are rows, not log lines.
	c.logLevel = "error"
	b, set, closeAll, msg := snapshotBroker(e.stderr, &c, fs)
	if msg != "" {
		fmt.Fprintf(e.stderr, "sandcall tools list: %s\n", msg)
		return exitFailure
	}
	defer closeAll()
	var rows []toolRow
	for _, f := range c.localFinds {
		if f.Reason != "" {
			name := f.Tool
			if name == "" {
				name = f.File
			}
			rows = append(rows, toolRow{Name: name, Source: "local", Callers: []string{}, Status: "skipped: " + f.Reason})
		}
	}
	rows = append(rows, c.programRows()...) // programs.go
	if set != nil {
		for _, w := range set.Warnings() {
			if strings.Contains(w, "changed since it was approved") || strings.HasPrefix(w, "name clash:") {
				continue // a row says it
			}
			fmt.Fprintf(e.stderr, "warning: %s\n", strings.TrimSuffix(w, "; retrying in the background"))
		}
		for name, server := range set.Disabled() {
			rows = append(rows, toolRow{Name: name, Source: server, Callers: []string{}, Status: disabledStatus(name)})
		}
		for _, cl := range set.Clashes() {
			rows = append(rows, toolRow{Name: cl.Tool, Source: cl.Loser, Callers: []string{},
				Status: fmt.Sprintf("skipped: name clash: server %s has a tool of the same name and is used (the server whose name sorts first)", cl.Winner)})
		}
	}
	p := c.cfg.principal()
	exposed := map[tools.Caller]map[string]bool{}
	for _, cl := range []tools.Caller{tools.Direct, tools.Code} {
		exposed[cl] = map[string]bool{}
		for _, t := range b.Exposed(cl, p) {
			exposed[cl][t.Name] = true
		}
	}
	for _, t := range b.Catalog().List() {
		callers := []string{}
		for _, cl := range []tools.Caller{tools.Direct, tools.Code} {
			if exposed[cl][t.Name] {
				callers = append(callers, string(cl))
			}
		}
		rows = append(rows, toolRow{Name: t.Name, Source: t.Source, Callers: callers, Status: "ok"})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	if *asJSON {
		b, _ := json.MarshalIndent(rows, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return exitOK
	}
	if len(rows) == 0 {
		fmt.Fprintln(e.stderr, "no tools (try --demo, or add scripts to "+filepath.ToSlash(local.DefaultDir)+")")
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tCALLERS\tSTATUS")
	for _, r := range rows {
		callers := strings.Join(r.Callers, ",")
		if callers == "" {
			callers = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Source, callers, r.Status)
	}
	_ = tw.Flush()
	return exitOK
}
