package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sandcall/sandcall/tools/upstream"
)

// Pins of upstream tool definitions, from the operator's side.
//
// serve and run pin each upstream tool's definition (name, description,
// schemas, annotations) by hash in .sandcall/pins.json in the working
// directory at first sight; a later, different definition disables the
// tool. `sandcall tools approve NAME` connects to the tool's server, as
// `servers test` does, records the hash of the definition it serves now,
// and writes an audit event; a running serve re-reads the pin file every
// second and re-enables the tool (clients get tools/list_changed).

const toolsApproveExamples = `  sandcall tools approve github_create_issue
  sandcall tools approve --audit audit.jsonl github_create_issue github_search
`

// toolsApprove is `sandcall tools approve NAME [NAME...]`.
func toolsApprove(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "tools approve", "[--config F] [--audit F] NAME [NAME...]", toolsApproveExamples)
	c := &common{}
	c.catalogFlags(fs, "unused by approve; accepted so every command takes the same flags")
	fs.StringVar(&c.audit, "audit", "", "also write the tool.approve audit events (JSON Lines) to this file, or - for stderr only")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		return usageErr(e, fs, "missing tool name: approve takes <server>_<tool> names, as tools list shows them")
	}
	if msg := c.loadConfig(fs); msg != "" {
		fmt.Fprintf(e.stderr, "%s: %s\n", fs.Name(), msg)
		return exitUsage
	}
	defer func() {
		for i := len(c.closers) - 1; i >= 0; i-- {
			c.closers[i]()
		}
	}()
	audit, err := c.auditLogger(e.stderr)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\n", fs.Name(), err)
		return exitFailure
	}
	// Every approval is also a line on stderr, whatever --audit says.
	stderrLog, _ := (&common{audit: "-"}).auditLogger(e.stderr)
	if c.audit == "-" {
		audit = nil
	}
	pins, err := upstream.OpenPins(upstream.DefaultPinFile, false)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\n", fs.Name(), err)
		return exitFailure
	}
	_ = sharePins(c, pins) // with a shared store, Pin writes there (and reports it down)
	cfg := upstream.Load(c.upstreamConfig())

	type listing struct {
		byName map[string]upstream.Listed
		err    error
	}
	listings := map[string]*listing{} // server name → its tools, listed once
	list := func(en upstream.Entry) *listing {
		if l, ok := listings[en.Name]; ok {
			return l
		}
		l := &listing{byName: map[string]upstream.Listed{}}
		listings[en.Name] = l
		cctx, cancel := context.WithTimeout(ctx, en.Server.Timeout+5*time.Second)
		defer cancel()
		conn, err := upstream.Connect(cctx, en.Server)
		if err != nil {
			l.err = err
			return l
		}
		defer conn.Close()
		listed, _, err := conn.Tools(cctx)
		if err != nil {
			l.err = err
			return l
		}
		for _, x := range listed {
			l.byName[x.Tool.Name] = x
		}
		return l
	}

	status := exitOK
	for _, name := range pos {
		var cands []upstream.Entry
		for _, en := range cfg.Entries {
			if en.Server != nil && strings.HasPrefix(name, upstream.ToolPrefix(en.Name)) {
				cands = append(cands, en)
			}
		}
		if len(cands) == 0 {
			fmt.Fprintf(e.stderr, "%s: no configured server has a tool named %q (a name is <server>_<tool>; %s)\n", fs.Name(), name, knownServers(cfg))
			status = exitFailure
			continue
		}
		var found *upstream.Listed
		var server upstream.Entry
		for _, en := range cands {
			l := list(en)
			if l.err != nil {
				fmt.Fprintf(e.stderr, "Failed to connect to %q: %v\n", en.Name, l.err)
				if h := connectHint(l.err, en); h != "" {
					fmt.Fprintf(e.stderr, "hint: %s\n", h)
				}
				continue
			}
			if x, ok := l.byName[name]; ok {
				found, server = &x, en
				break
			}
		}
		if found == nil {
			var names []string
			for _, en := range cands {
				for n := range listings[en.Name].byName {
					names = append(names, n)
				}
			}
			sort.Strings(names)
			fmt.Fprintf(e.stderr, "%s: the servers that could have it do not list %q now", fs.Name(), name)
			if len(names) > 0 {
				fmt.Fprintf(e.stderr, " (they list: %s)", strings.Join(names, ", "))
			}
			fmt.Fprintln(e.stderr)
			status = exitFailure
			continue
		}
		old, err := pins.Pin(upstream.PinKey(server.Name, found.Upstream), found.Hash)
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: %v\n", fs.Name(), err)
			status = exitFailure
			continue
		}
		if old == found.Hash {
			fmt.Fprintf(e.stdout, "%s: the current definition is already approved (sha256 %s)\n", name, short(found.Hash))
			continue
		}
		attrs := []any{"tool", name, "server", server.Name, "old_hash", old, "new_hash", found.Hash, "pin_file", pins.Path()}
		stderrLog.Info("tool.approve", attrs...)
		if audit != nil {
			audit.Info("tool.approve", attrs...)
		}
		was := "not pinned before"
		if old != "" {
			was = "was sha256 " + short(old)
		}
		fmt.Fprintf(e.stdout, "approved %s (server %q): definition sha256 %s, %s; a running sandcall serve re-enables it within seconds\n",
			name, server.Name, short(found.Hash), was)
	}
	return status
}

// short abbreviates a hash for people.
func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// knownServers names the configured servers for an error message.
func knownServers(cfg *upstream.Config) string {
	if len(cfg.Entries) == 0 {
		return "no upstream servers are configured"
	}
	names := make([]string, 0, len(cfg.Entries))
	for _, en := range cfg.Entries {
		names = append(names, en.Name)
	}
	return "known servers: " + strings.Join(names, ", ")
}

// disabledStatus is the tools list status of a tool whose definition
// changed since it was approved.
func disabledStatus(name string) string {
	return "disabled (definition changed; run sandcall tools approve " + name + ")"
}
