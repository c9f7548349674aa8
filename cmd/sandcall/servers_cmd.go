package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sandcall/sandcall/tools/upstream"
)

// cmdServers is `sandcall servers list|test NAME`: the upstream MCP servers
// of the project's configs (.cursor/mcp.json, .vscode/mcp.json, .mcp.json,
// mcp.json, and files named with --config-file).
func cmdServers(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "servers", "list | test NAME", "  sandcall servers list\n  sandcall servers test github\n")
	root := fs.String("root", ".", "project root searched for MCP configs")
	var files multiFlag
	fs.Var(&files, "config-file", "an MCP config file read before the project's (repeatable)")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		return usageErr(e, fs, "missing subcommand: list or test NAME")
	}
	cfg := upstream.Load(upstream.LoadConfig{Root: *root, Files: files})
	switch pos[0] {
	case "list":
		if len(pos) != 1 {
			return usageErr(e, fs, "list takes no arguments")
		}
		for _, w := range cfg.Warnings {
			if !strings.HasPrefix(w, "invalid server") {
				fmt.Fprintf(e.stderr, "warning: %s\n", w)
			}
		}
		if len(cfg.Entries) == 0 {
			fmt.Fprintln(e.stdout, "no upstream servers configured")
			return exitOK
		}
		for _, en := range cfg.Entries {
			status := "enabled"
			if !en.Enabled {
				status = "disabled"
			}
			if en.Err != nil {
				status = "invalid"
			}
			fmt.Fprintf(e.stdout, "%-20s %-6s %-8s %s\n", en.Name, en.Type, status, en.Source)
			for _, s := range en.Shadowed {
				fmt.Fprintf(e.stdout, "  shadows %s\n", s)
			}
			if en.Err != nil {
				fmt.Fprintf(e.stdout, "  error: %v\n", en.Err)
			}
		}
		return exitOK
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
		c, err := upstream.Connect(ctx, en.Server)
		if err == nil {
			defer c.Close()
			var listed []upstream.Listed
			var errs []error
			listed, errs, err = c.Tools(ctx)
			if err == nil {
				sort.Slice(listed, func(i, j int) bool { return listed[i].Tool.Name < listed[j].Tool.Name })
				fmt.Fprintf(e.stdout, "Connected to %q (%s): %d tools\n", name, en.Type, len(listed))
				for _, l := range listed {
					fmt.Fprintf(e.stdout, "  %-32s %s\n", l.Tool.Name, oneLine(l.Tool.Summary()))
				}
				for _, te := range errs {
					fmt.Fprintf(e.stdout, "  skipped: %v\n", te)
				}
				return exitOK
			}
		}
		fmt.Fprintf(e.stderr, "Failed to connect to %q: %v\n", name, err)
		msg := err.Error()
		switch {
		case errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "timed out"):
			fmt.Fprintf(e.stderr, "hint: the server did not answer within %v; raise \"timeout\" in %s or check that it starts by hand\n", en.Server.Timeout, en.Source)
		case strings.Contains(msg, "401") || strings.Contains(msg, "403") || strings.Contains(strings.ToLower(msg), "unauthorized") || strings.Contains(strings.ToLower(msg), "forbidden"):
			fmt.Fprintf(e.stderr, "hint: the server refused the credentials; check the Authorization header in %s and that its ${VAR} or !command gives a valid token\n", en.Source)
		}
		return exitFailure
	}
	return usageErr(e, fs, "unknown subcommand %q: want list or test NAME", pos[0])
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
