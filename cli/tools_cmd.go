package cli

import (
	"context"
	"encoding/json"
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

// localDir returns the local tools directory and whether there is one: dir
// if set, else .agents/tools of the project root when it exists.
func localDir(dir, root string) (string, bool) {
	if dir != "" {
		return dir, true
	}
	d := filepath.Join(root, local.DefaultDir)
	if fi, err := os.Stat(d); err == nil && fi.IsDir() {
		return d, true
	}
	return "", false
}

// localTools loads the local tools directory, if any, logs what was
// skipped, and keeps the Set for watchLocalTools. A local tool whose name
// another tool of ts already has loses and is reported.
func (c *common) localTools(ts []*tools.Tool) []*tools.Tool {
	dir, ok := localDir(c.toolsDir, c.root())
	if !ok {
		return ts
	}
	log := c.logger(os.Stderr)
	lc := local.Config{Dir: dir, Timeout: c.toolsTimeout, Logger: log, Env: c.passEnv(), Reserved: reservedNames(c.upstreamConfig())}
	if c.toolsDir == "" { // the project's own scripts: under trust, never leading out
		lc.Contain = c.root()
		if !c.trustProject {
			c.setupTrust()
			lc.Trust = c.pt.script
		}
	}
	set, fs := local.Load(lc)
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
	var c common
	c.catalogFlags(fs, "unused by check; accepted so every command takes the same flags")
	fs.StringVar(&c.toolsDir, "dir", "", "same as --tools-dir")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErr(e, fs, "unexpected argument %q", pos[0])
	}
	c.stderrTo = e.stderr
	d := c.toolsDir
	if d == "" {
		d = local.DefaultDir
	}
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		fmt.Fprintf(e.stderr, "sandcall tools check: no directory %s\n", d)
		return exitFailure
	}
	// The format of every file, trusted or not (servers list says which
	// are trusted): read bounded, never through a link out of the project.
	lc := local.Config{Dir: d, Reserved: reservedNames(c.upstreamConfig())}
	if c.toolsDir == "" {
		lc.Contain = c.root()
	}
	set, finds := local.Load(lc)
	var ts []*tools.Tool
	if c.demo {
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
		for _, st := range set.Statuses() {
			if st.State != upstream.StateUp && st.State != upstream.StateNotStarted {
				rows = append(rows, toolRow{Name: upstream.ToolPrefix(st.Server) + "*", Source: st.Server, Callers: []string{}, Status: serverRow(st)})
			}
		}
		for _, cl := range set.Clashes() {
			rows = append(rows, toolRow{Name: cl.Tool, Source: cl.Loser, Callers: []string{},
				Status: fmt.Sprintf("skipped: name clash: server %s has a tool of the same name and is used (the server whose name sorts first)", cl.Winner)})
		}
	}
	for _, st := range c.api.statuses() {
		rows = append(rows, toolRow{Name: st.name + "_*", Source: st.name, Callers: []string{}, Status: st.status})
	}
	p := principalOf(c.cfg)
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
