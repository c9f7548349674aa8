package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sandcall/sandcall/cli/config"
	"github.com/sandcall/sandcall/tools/local"
	"github.com/sandcall/sandcall/tools/programs"
	"github.com/sandcall/sandcall/tools/projfile"
	"github.com/sandcall/sandcall/tools/trust"
	"github.com/sandcall/sandcall/tools/upstream"
)

// Project trust. Everything a project's files can make sandcall do — start
// the servers of its MCP configs (.mcp.json and friends, and the files a
// sandcall entry there names with --mcp-config), run its .agents/tools
// scripts, and the keys of its sandcall.yaml that run code, send data
// elsewhere or pass secrets — happens only once a person trusted it with
// `sandcall servers trust`. The trust is kept outside the checkout, in the
// user's state directory (tools/trust), keyed by the project's canonical
// path: a repository cannot trust itself, and a clone is trusted by no one.
// What the operator gives (flags, an explicit --config, the user's config
// directory, an --mcp-config file outside the project, a --tools-dir) is
// the operator's and needs no trust. --trust-project trusts everything for
// one invocation (CI, a checkout you own).

// projectTrust is the trust of the project one command runs in.
type projectTrust struct {
	root string // the project root as given (".")
	all  bool   // --trust-project
	p    *trust.Project
	err  error // why p is nil: nothing of the project is trusted
	// operator holds the MCP config files named on the command line that
	// lie outside the project: the operator's, trusted as they are.
	operator map[string]bool
}

// openProjectTrust opens the trust of the project at root; warn receives
// the problems (an unusable state directory, a trust file in the checkout).
func openProjectTrust(root string, all bool, operatorFiles []string, warn func(string)) *projectTrust {
	pt := &projectTrust{root: root, all: all, operator: map[string]bool{}}
	for _, f := range operatorFiles {
		if _, inside, err := projfile.Inside(root, f); err == nil && !inside {
			abs, _ := filepath.Abs(f)
			pt.operator[abs] = true
		}
	}
	if _, err := os.Lstat(filepath.Join(root, trust.InCheckoutFile)); err == nil {
		warn(trust.InCheckoutFile + " in the project is ignored: trust is kept outside the checkout, in the user's state directory, " +
			"so that a repository cannot trust itself; review the project, then run 'sandcall servers trust'")
	}
	pt.p, pt.err = trust.Open(root)
	if pt.err != nil && !all {
		warn(fmt.Sprintf("project trust is unavailable (%v): the project's servers, scripts and sandcall.yaml keys that need trust are not used", pt.err))
	}
	return pt
}

// operatorFile reports whether path is an MCP config file the operator
// named outside the project.
func (pt *projectTrust) operatorFile(path string) bool {
	abs, err := filepath.Abs(path)
	return err == nil && pt.operator[abs]
}

// server decides whether a configured server may start: nil if it may,
// else why not (for upstream.Options.Trust).
func (pt *projectTrust) server(e upstream.Entry) error {
	if pt.all || pt.operatorFile(e.Source) {
		return nil
	}
	if pt.p == nil {
		return fmt.Errorf("project trust is unavailable: %v", pt.err)
	}
	_ = pt.p.Reload() // trust given meanwhile counts
	pin, err := upstream.Pin(e, pt.root)
	if err != nil {
		return err
	}
	old, ok := pt.p.Server(trust.ServerKey(pt.root, e.Source, e.Name))
	if !ok {
		return errors.New("never trusted in this project")
	}
	if ch := pin.Changes(old); len(ch) > 0 {
		return errors.New(strings.Join(ch, "; ") + " since it was trusted")
	}
	return nil
}

// script decides whether the project script at path, with content of hash
// sum, may run (for local.Config.Trust).
func (pt *projectTrust) script(path, sum string) error {
	if pt.all {
		return nil
	}
	rel := projfile.Rel(pt.root, path)
	if pt.p == nil {
		return fmt.Errorf("the script %s is not trusted: project trust is unavailable (%v)", rel, pt.err)
	}
	_ = pt.p.Reload()
	if pt.p.FollowScripts() {
		return nil
	}
	h, ok := pt.p.Script(rel)
	switch {
	case ok && h == sum:
		return nil
	case ok:
		return fmt.Errorf("the script %s changed since it was trusted (sha256 %s… now %s…); it does not run until trusted again", rel, h[:min(12, len(h))], sum[:12])
	case pt.p.Empty():
		return fmt.Errorf("the script %s is not trusted: this project (%s) was never trusted", rel, pt.p.Root)
	}
	return fmt.Errorf("the script %s is new since the project was trusted; it does not run until trusted", rel)
}

// config reports whether the keys that need trust of the project's config
// file rel, whose values hash to hash, were trusted (config.Options.Trusted).
func (pt *projectTrust) config(rel, hash string) bool {
	if pt.all {
		return true
	}
	if pt.p == nil {
		return false
	}
	_ = pt.p.Reload()
	cp, ok := pt.p.Config(rel)
	return ok && cp.Hash == hash
}

// projectScripts hashes the scripts of the project's tools directory and
// the program files of its programs directory (both are code the project
// makes sandcall run): path relative to root → SHA-256, and the files that
// could not be read.
func projectScripts(root string) (map[string]string, []string) {
	out := map[string]string{}
	var bad []string
	for _, d := range []struct {
		dir string
		max int64
	}{{local.DefaultDir, local.MaxScriptBytes}, {programs.DefaultDir, int64(programs.MaxSourceBytes)}} {
		dir := filepath.Join(root, d.dir)
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			if strings.HasPrefix(de.Name(), ".") || de.IsDir() {
				continue
			}
			path := filepath.Join(dir, de.Name())
			h, err := projfile.Hash(path, d.max, root)
			if err != nil {
				bad = append(bad, err.Error())
				continue
			}
			out[projfile.Rel(root, path)] = h
		}
	}
	return out, bad
}

// scriptNoun names what the project file rel is to a person: a program
// (of the programs directory) or a script.
func scriptNoun(rel string) string {
	if strings.HasPrefix(filepath.ToSlash(rel), programs.DefaultDir+"/") {
		return "program"
	}
	return "script"
}

// trustPlan is what `sandcall servers trust` is about to record.
type trustPlan struct {
	servers map[string]trust.Server
	scripts map[string]string
	configs map[string]trust.Config
	lines   []string // what it trusts and what changed, for the person
	failed  bool     // something could not be pinned
}

// serversTrust is `sandcall servers trust`: it shows what it is about to
// trust and what changed since the project was last trusted, then records
// it (unless dry). follow, if not nil, sets the per-project choice to
// trust the scripts as they change.
func serversTrust(e *env, c *common, dry bool, follow *bool) int {
	pt := c.pt
	if pt.p == nil {
		fmt.Fprintf(e.stderr, "sandcall servers trust: %v\n", pt.err)
		return exitFailure
	}
	cfg := upstream.Load(c.upstreamConfig())
	if len(cfg.Errors) > 0 {
		for _, msg := range cfg.Errors {
			fmt.Fprintf(e.stderr, "error: %s\n", msg)
		}
		fmt.Fprintln(e.stderr, "sandcall servers trust: nothing trusted: fix the config files above first")
		return exitFailure
	}
	plan := c.planTrust(cfg)
	following := pt.p.FollowScripts()
	if follow != nil {
		following = *follow
	}
	fmt.Fprintf(e.stdout, "Project %s\n", pt.p.Root)
	for _, l := range plan.lines {
		fmt.Fprintf(e.stdout, "  %s\n", l)
	}
	if following {
		fmt.Fprintf(e.stdout, "  scripts of %s are trusted as they change (--follow-scripts; --follow-scripts=false stops it)\n", local.DefaultDir)
	}
	if plan.failed {
		fmt.Fprintln(e.stderr, "sandcall servers trust: nothing trusted: what is above could not be pinned")
		return exitFailure
	}
	if len(plan.lines) == 0 {
		fmt.Fprintln(e.stdout, "  nothing to trust: no server in the project's MCP configs, no script in "+local.DefaultDir+", no sandcall.yaml key that needs trust")
	}
	if dry {
		fmt.Fprintln(e.stdout, "Dry run: nothing recorded.")
		return exitOK
	}
	pt.p.SetServers(plan.servers)
	pt.p.SetScripts(plan.scripts)
	for rel := range pt.p.Configs() {
		if _, ok := plan.configs[rel]; !ok {
			pt.p.SetConfig(rel, trust.Config{})
		}
	}
	for rel, cp := range plan.configs {
		pt.p.SetConfig(rel, cp)
	}
	pt.p.SetFollowScripts(following)
	if err := pt.p.Save(); err != nil {
		fmt.Fprintf(e.stderr, "sandcall servers trust: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(e.stdout, "Trusted (recorded outside the project, in %s).\n", pt.p.File())
	return exitOK
}

// planTrust pins what the project's files make sandcall do now and says
// how it differs from what was trusted.
func (c *common) planTrust(cfg *upstream.Config) trustPlan {
	pt := c.pt
	plan := trustPlan{servers: map[string]trust.Server{}, scripts: map[string]string{}, configs: map[string]trust.Config{}}
	old := pt.p.Servers()
	for _, en := range cfg.Entries {
		where := fmt.Sprintf("server %s (%s)", en.Name, projfile.Rel(c.root(), en.Source))
		switch {
		case en.Server != nil && upstream.IsSelf(en.Server, "", c.root()):
			reads := "its own catalog"
			if fs := upstream.SelfMCPConfigs(en.Server, c.root()); len(fs) > 0 {
				rel := make([]string, len(fs))
				for i, f := range fs {
					rel[i] = projfile.Rel(c.root(), f)
				}
				reads = strings.Join(rel, ", ") + ", whose servers are listed here"
			}
			plan.lines = append(plan.lines, fmt.Sprintf("never    %s: sandcall itself, never trusted or started (it reads %s)", where, reads))
			continue
		case pt.operatorFile(en.Source):
			plan.lines = append(plan.lines, fmt.Sprintf("operator %s: in a file named on the command line outside the project; needs no trust", where))
			continue
		}
		pin, err := upstream.Pin(en, c.root())
		if err != nil {
			plan.lines = append(plan.lines, fmt.Sprintf("ERROR    %s: %v", where, err))
			plan.failed = true
			continue
		}
		key := trust.ServerKey(c.root(), en.Source, en.Name)
		plan.servers[key] = pin
		what := pin.Runs
		if en.Err != nil {
			what = fmt.Sprintf("not valid here (%v); its definition as written", en.Err)
		}
		prev, had := old[key]
		switch ch := pin.Changes(prev); {
		case !had:
			plan.lines = append(plan.lines, fmt.Sprintf("new      %s: %s", where, what))
		case len(ch) > 0:
			plan.lines = append(plan.lines, fmt.Sprintf("changed  %s: %s; now it %s", where, strings.Join(ch, "; "), strings.TrimPrefix(what, "it ")))
		default:
			plan.lines = append(plan.lines, fmt.Sprintf("same     %s: %s", where, what))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(old)) {
		if _, ok := plan.servers[key]; !ok {
			plan.lines = append(plan.lines, fmt.Sprintf("dropped  server %s: no longer configured", key))
		}
	}
	scripts, bad := projectScripts(c.root())
	for _, b := range bad {
		plan.lines = append(plan.lines, "skipped  script "+b)
	}
	oldScripts := pt.p.Scripts()
	for _, rel := range slices.Sorted(maps.Keys(scripts)) {
		plan.scripts[rel] = scripts[rel]
		h, had := oldScripts[rel]
		switch {
		case !had:
			plan.lines = append(plan.lines, "new      "+scriptNoun(rel)+" "+rel)
		case h != scripts[rel]:
			plan.lines = append(plan.lines, "changed  "+scriptNoun(rel)+" "+rel+" (its content)")
		default:
			plan.lines = append(plan.lines, "same     "+scriptNoun(rel)+" "+rel)
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(oldScripts)) {
		if _, ok := scripts[rel]; !ok {
			plan.lines = append(plan.lines, "dropped  "+scriptNoun(rel)+" "+rel+": no longer there")
		}
	}
	c.planConfigTrust(&plan)
	return plan
}

// warnOnce writes each warning once to w.
type warnOnce struct {
	w    io.Writer
	seen map[string]bool
}

func (o *warnOnce) warn(msg string) {
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	if o.seen[msg] {
		return
	}
	o.seen[msg] = true
	fmt.Fprintf(o.w, "warning: %s\n", msg)
}

// planConfigTrust adds to plan the keys of the project's sandcall.yaml
// that need trust (store, tracing, env_passthrough, audit, principal, auth,
// workers, pool), as written, and how they differ from what was trusted.
func (c *common) planConfigTrust(plan *trustPlan) {
	keys, rel, err := config.ProjectKeys(c.root())
	if err != nil {
		plan.lines = append(plan.lines, fmt.Sprintf("ERROR    %v", err))
		plan.failed = true
		return
	}
	old, had := c.pt.p.Config(rel)
	if len(keys) == 0 {
		if had && rel != "" {
			plan.lines = append(plan.lines, "dropped  "+rel+": it no longer sets a key that needs trust")
		}
		return
	}
	cp := trust.Config{Hash: trust.ConfigHash(keys), Keys: map[string]string{}}
	shownChange := false
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		cp.Keys[k] = config.Shown(keys[k])
		was, seen := old.Keys[k]
		switch {
		case !had || !seen:
			plan.lines = append(plan.lines, fmt.Sprintf("new      %s: %s: %s", rel, k, cp.Keys[k]))
			shownChange = true
		case was != cp.Keys[k]:
			plan.lines = append(plan.lines, fmt.Sprintf("changed  %s: %s: %s (was %s)", rel, k, cp.Keys[k], was))
			shownChange = true
		default:
			plan.lines = append(plan.lines, fmt.Sprintf("same     %s: %s: %s", rel, k, cp.Keys[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old.Keys)) {
		if _, ok := keys[k]; !ok {
			plan.lines = append(plan.lines, fmt.Sprintf("dropped  %s: %s: no longer set", rel, k))
			shownChange = true
		}
	}
	if had && old.Hash != cp.Hash && !shownChange {
		plan.lines = append(plan.lines, fmt.Sprintf("changed  %s: a hidden value (a header, a token hash) changed", rel))
	}
	plan.configs[rel] = cp
}
