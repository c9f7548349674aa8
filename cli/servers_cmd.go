package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/sandcall/sandcall/tools/local"
	"github.com/sandcall/sandcall/tools/upstream"
)

// cmdServers is `sandcall servers list|test NAME|enable NAME|disable NAME`:
// the upstream MCP servers of the project's configs (.cursor/mcp.json,
// .vscode/mcp.json, .mcp.json, mcp.json, and files named with
// --config-file).
func cmdServers(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "servers", "list | test NAME | trust [--dry-run] [--follow-scripts] | enable NAME | disable NAME",
		"  sandcall servers list\n  sandcall servers test github\n  sandcall servers trust --dry-run   # what trust would record, and what changed\n"+
			"  sandcall servers trust            # after reviewing the project's configs and scripts\n"+
			"  sandcall servers trust --follow-scripts   # also trust this project's scripts as they change\n"+
			"  sandcall servers disable github   # sets \"enabled\": false in the file that defines it\n")
	var c common
	c.catalogFlags(fs, "unused by servers; accepted so every command takes the same flags")
	fs.StringVar(&c.rootDir, "root", "", "project root searched for MCP configs (default: the working directory)")
	fs.Var(&c.configFiles, "config-file", "an MCP config file read before the project's (repeatable)")
	verbose := fs.Bool("verbose", false, "test: stream the server's stderr to stderr as it comes")
	dry := fs.Bool("dry-run", false, "trust: show what would be trusted and what changed, record nothing")
	follow := fs.Bool("follow-scripts", false, "trust: also trust this project's "+local.DefaultDir+" scripts as they change (recorded outside the project; =false stops it)")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		return usageErr(e, fs, "missing subcommand: list, test NAME, trust, enable NAME or disable NAME")
	}
	c.stderrTo = e.stderr
	if msg := c.loadConfig(fs); msg != "" {
		fmt.Fprintf(e.stderr, "sandcall servers: %s\n", msg)
		return exitUsage
	}
	cfg := upstream.Load(c.upstreamConfig())
	switch pos[0] {
	case "list":
		if len(pos) != 1 {
			return usageErr(e, fs, "list takes no arguments")
		}
		return serversList(e, &c, cfg)
	case "trust":
		if len(pos) != 1 {
			return usageErr(e, fs, "trust takes no arguments: it trusts every server of the project's configs and every script of "+local.DefaultDir)
		}
		var followSet *bool
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "follow-scripts" {
				followSet = follow
			}
		})
		return serversTrust(e, &c, *dry, followSet)
	case "enable", "disable":
		if len(pos) != 2 {
			return usageErr(e, fs, "%s takes one server name", pos[0])
		}
		return serversSetEnabled(e, cfg, pos[1], pos[0] == "enable")
	case "test":
		if len(pos) != 2 {
			return usageErr(e, fs, "test takes one server name")
		}
		name := pos[1]
		en, found := cfg.Lookup(name)
		if !found {
			fmt.Fprintf(e.stderr, "sandcall servers: no server %q is configured\n", name)
			return exitFailure
		}
		if en.Err != nil {
			fmt.Fprintf(e.stderr, "%v\n", en.Err)
			return exitFailure
		}
		// Pins are only read here: a test shows which definitions changed
		// but trusts nothing new.
		pins, perr := upstream.OpenPins(upstream.DefaultPinFile, true)
		if perr != nil {
			fmt.Fprintf(e.stderr, "warning: %v\n", perr)
		}
		var tee io.Writer
		if *verbose {
			tee = e.stderr
		}
		c, err := upstream.Dial(ctx, en.Server, tee)
		if err == nil {
			defer c.Close()
			var listed []upstream.Listed
			var errs []error
			listed, errs, err = c.Tools(ctx)
			if err == nil {
				sort.Slice(listed, func(i, j int) bool { return listed[i].Tool.Name < listed[j].Tool.Name })
				fmt.Fprintf(e.stdout, "Connected to %q (%s): %d tools\n", name, en.Type, len(listed))
				for _, l := range listed {
					mark := ""
					if pins != nil {
						if h, ok := pins.PinOf(name, l.Upstream, l.Tool.Name); ok && h != l.Hash {
							mark = " [definition changed since approved: disabled until sandcall tools approve " + l.Tool.Name + "]"
						}
					}
					fmt.Fprintf(e.stdout, "  %-32s %s%s\n", l.Tool.Name, oneLine(l.Tool.Summary()), mark)
				}
				for _, te := range errs {
					fmt.Fprintf(e.stdout, "  skipped: %v\n", te)
				}
				return exitOK
			}
		}
		fmt.Fprintf(e.stderr, "Failed to connect to %q: %v\n", name, err)
		if h := connectHint(err, en); h != "" {
			fmt.Fprintf(e.stderr, "hint: %s\n", h)
		}
		return exitFailure
	}
	return usageErr(e, fs, "unknown subcommand %q: want list, test NAME, trust, enable NAME or disable NAME", pos[0])
}

// serversList is `sandcall servers list`: every configured server, where
// it stands (trusted or not, sandcall itself, invalid), and the name
// clashes. It exits 1 when a config file cannot be read.
func serversList(e *env, c *common, cfg *upstream.Config) int {
	status := exitOK
	for _, msg := range cfg.Errors {
		fmt.Fprintf(e.stderr, "error: %s\n", msg)
		status = exitFailure
	}
	for _, w := range cfg.Warnings {
		if !strings.HasPrefix(w, "invalid server") {
			fmt.Fprintf(e.stderr, "warning: %s\n", w)
		}
	}
	if len(cfg.Entries) == 0 {
		if status == exitOK {
			fmt.Fprintln(e.stdout, "no upstream servers configured")
		}
		return status
	}
	trusted := c.serverTrust()
	for _, en := range cfg.Entries {
		state := "enabled"
		if !en.Enabled {
			state = "disabled"
		}
		if en.Err != nil {
			state = "invalid"
		}
		self := en.Server != nil && upstream.IsSelf(en.Server, "", c.root())
		if self {
			state = "self"
		}
		fmt.Fprintf(e.stdout, "%-20s %-6s %-8s %s\n", en.Name, en.Type, state, en.Source)
		for _, s := range en.Shadowed {
			fmt.Fprintf(e.stdout, "  shadows %s\n", s)
		}
		if en.Err != nil {
			fmt.Fprintf(e.stdout, "  error: %v\n", en.Err)
		}
		if self {
			fmt.Fprintf(e.stdout, "  sandcall itself: never started or trusted; serve reads its --mcp-config files\n")
			continue
		}
		if trusted != nil {
			if err := trusted(en); err != nil {
				fmt.Fprintf(e.stdout, "  not trusted (%v): serve and run skip it until 'sandcall servers trust' (review it first)\n", err)
			}
		}
		for _, o := range cfg.Entries { // same prefix: every tool of the same name clashes
			if o.Name == en.Name || !o.Enabled || !en.Enabled || upstream.ToolPrefix(o.Name) != upstream.ToolPrefix(en.Name) {
				continue
			}
			if o.Name < en.Name {
				fmt.Fprintf(e.stdout, "  name clash: its tools are named %s… like server %s's; where both have a tool, %s's is used (rename one server)\n", upstream.ToolPrefix(en.Name), o.Name, o.Name)
			} else {
				fmt.Fprintf(e.stdout, "  name clash: its tools are named %s… like server %s's; where both have a tool, this one's is used\n", upstream.ToolPrefix(en.Name), o.Name)
			}
		}
	}
	return status
}

// connectHint says what to check after a failed connection to en's server.
func connectHint(err error, en upstream.Entry) string {
	msg := strings.ToLower(err.Error())
	switch {
	case errors.Is(err, upstream.ErrUnauthorized) || strings.Contains(msg, "401") || strings.Contains(msg, "unauthorized"):
		return fmt.Sprintf("the server did not accept the credentials (HTTP 401): check the Authorization header of %q in %s and that the token it gets (from ${VAR} or a !command) is set, current and not expired", en.Name, en.Source)
	case errors.Is(err, upstream.ErrForbidden) || strings.Contains(msg, "403") || strings.Contains(msg, "forbidden"):
		return fmt.Sprintf("the server accepted the credentials but refused access (HTTP 403): the token of %q lacks the permissions (scopes, roles) this server requires; ask for a token that has them", en.Name)
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "timed out"):
		return fmt.Sprintf("the server did not answer within %v: raise \"timeout\" of %q in %s, or check that it starts (stdio) or is reachable (http) by hand", en.Server.Timeout, en.Name, en.Source)
	}
	return ""
}

// serversSetEnabled is `sandcall servers enable|disable NAME`.
func serversSetEnabled(e *env, cfg *upstream.Config, name string, enabled bool) int {
	en, found := cfg.Lookup(name)
	if !found {
		names := make([]string, 0, len(cfg.Entries))
		for _, x := range cfg.Entries {
			names = append(names, x.Name)
		}
		known := "none are configured"
		if len(names) > 0 {
			known = "known servers: " + strings.Join(names, ", ")
		}
		fmt.Fprintf(e.stderr, "sandcall servers: no server %q is configured; %s\n", name, known)
		return exitFailure
	}
	changed, err := upstream.SetEnabled(en, enabled)
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall servers: %v\n", err)
		return exitFailure
	}
	state := "disabled"
	if enabled {
		state = "enabled"
	}
	switch {
	case !changed:
		fmt.Fprintf(e.stdout, "%s is already %s in %s\n", name, state, en.Source)
	default:
		fmt.Fprintf(e.stdout, "%s %s in %s (takes effect at the next start of sandcall serve)\n", name, state, en.Source)
	}
	return exitOK
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
