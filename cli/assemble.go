package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/local"
	"github.com/sandcall/sandcall/tools/upstream"
)

// One catalog everywhere.
//
// serve, run, `tools search|describe|list|lint` and `policy explain|test`
// all see the catalog assemble builds: the demo tools (--demo), the local
// scripts (.agents/tools or --tools-dir), the tools of the upstream servers
// of .mcp.json in the working directory (with the pins of
// .sandcall/pins.json: a changed definition is disabled everywhere), the
// discovery tools, and the policy in force (--policy, else the config
// file's), on one broker. So `sandcall tools search` answers what the
// server's search_tools answers, and `policy explain` decides for the tool
// the server would dispatch.

// assembleMode says what an assembled catalog is for.
type assembleMode int

const (
	// live: serve and run. Pins are written, the policy file is reloaded
	// when it changes, upstream servers are supervised until close.
	live assembleMode = iota
	// snapshot: the read-only commands. Pins are only read, the policy is
	// loaded once; servers stop when the command ends (c.closers).
	snapshot
)

// snapshotAttachTimeout bounds the wait for upstream servers' first
// listing in the read-only commands.
const snapshotAttachTimeout = 2 * time.Minute

// assemble builds the catalog of ts (the demo tools, with the local script
// tools already appended by common.catalogTools) plus the upstream servers,
// and a broker over it configured by bc (its Catalog is set here), with the
// discovery tools and c's policy. What it starts is stopped by c's closers.
func assemble(ts []*tools.Tool, c *common, mode assembleMode, bc bindings.BrokerConfig, log *slog.Logger) (*bindings.Broker, *upstream.Set, error) {
	// Programs (programs.go): .agents/programs, save_program, state bounds.
	ts, bc = c.programsBefore(ts, mode, bc, log)
	cat, err := tools.NewCatalog(ts...)
	if err != nil {
		return nil, nil, err
	}
	// Upstream MCP servers from .mcp.json and friends in the working
	// directory; a bad server is skipped with a warning, an unreachable one
	// retried in the background. Not in a sandcall that is itself an
	// upstream of another: no recursion.
	var set *upstream.Set
	if os.Getenv(upstream.NestedEnv) == "" {
		pins, err := upstream.OpenPins(upstream.DefaultPinFile, mode == snapshot)
		if err != nil {
			return nil, nil, err
		}
		if err := sharePins(c, pins); err != nil { // pins_store.go
			log.Warn("upstream pins: the shared store is unavailable; tried again at each check", "err", err)
		}
		ctx := context.Background()
		if mode == snapshot {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, snapshotAttachTimeout)
			defer cancel()
		}
		// serve attaches in the background: initialize is answered at
		// once and tools appear (list_changed) as their servers come up;
		// run starts only the servers its program names (c.needs).
		set = upstream.Attach(ctx, cat, upstream.Options{Config: c.upstreamConfig(), Logger: log, Pins: pins,
			Trusted: serverTrust(c.trustProject, "."), Background: mode == live && !c.oneShot, Want: c.needs,
			Env: c.passEnv(), Audit: bc.Audit})
		c.closers = append(c.closers, set.Close)
	}
	bc.Catalog = cat
	broker, err := bindings.NewBroker(bc)
	if err != nil {
		return nil, nil, err
	}
	if set != nil {
		broker.SetUnavailable(disabledUpstream(set))
	}
	c.programsAfter(cat, mode, log) // programs.go: saved programs, and reloads for serve and run
	// search_tools and describe_tools (docs/mcp.md). A tool already named
	// so (a local script, say) keeps the name, and discovery is off.
	if err := bindings.AddDiscovery(broker); err != nil {
		log.Warn("discovery tools not added", "err", err.Error())
	}
	if mode == live {
		stop, err := keepPolicy(c.policy, broker, log)
		if err != nil {
			return nil, nil, err
		}
		c.closers = append(c.closers, stop)
	} else if c.policy != "" {
		if _, err := bindings.LoadPolicyFile(c.policy, broker, nil); err != nil {
			return nil, nil, err
		}
	}
	return broker, set, nil
}

// disabledUpstream tells the broker why a call names an upstream tool that
// set disabled (its definition changed since it was approved), and how an
// operator re-enables it.
func disabledUpstream(set *upstream.Set) func(string) (bindings.Unavailability, bool) {
	return func(name string) (bindings.Unavailability, bool) {
		srv, ok := set.Disabled()[name]
		if !ok {
			return bindings.Unavailability{}, false
		}
		return bindings.Unavailability{
			Message: fmt.Sprintf("tool %s of server %q is disabled: its definition changed since it was approved", name, srv),
			Hint: "A person re-enables it after reviewing the change with `sandcall tools approve " + name +
				"`; until then tell the user, or use another tool.",
			Rule: "upstream.pin_changed",
		}, true
	}
}

// catalogFlags registers the flags that choose the catalog of a read-only
// command (--demo, --demo-inbox, --tools-dir, --policy, --config,
// --trust-project) on fs.
func (c *common) catalogFlags(fs *flag.FlagSet, policyUsage string) {
	fs.BoolVar(&c.demo, "demo", false, "include the embedded demo toolsets")
	fs.StringVar(&c.demoInbox, "demo-inbox", "", "include the support-inbox demo tools: clean or injected (see 'sandcall demo inbox')")
	fs.StringVar(&c.toolsDir, "tools-dir", "", "local tools directory (default: "+local.DefaultDir+" in the working directory, if present)")
	fs.StringVar(&c.policy, "policy", "", policyUsage)
	fs.StringVar(&c.config, "config", "", "config file (default: "+defaultConfigFile+" in the working directory, if present); its policy applies")
	fs.BoolVar(&c.trustProject, "trust-project", false,
		"use the project's MCP servers and "+local.DefaultDir+" scripts without 'sandcall servers trust', as serve and run do with it")
}

// snapshotBroker assembles the catalog for a read-only command whose flags
// c.catalogFlags registered on fs: the same catalog and policy serve would
// use. Warnings go to stderr. close stops the upstream servers.
func snapshotBroker(stderr io.Writer, c *common, fs *flag.FlagSet) (b *bindings.Broker, set *upstream.Set, close func(), msg string) {
	if msg := c.loadConfig(fs); msg != "" {
		return nil, nil, nil, msg
	}
	if c.logLevel == "" {
		c.logLevel = "warn"
	}
	log := c.logger(stderr)
	close = func() {
		for i := len(c.closers) - 1; i >= 0; i-- {
			c.closers[i]()
		}
		c.closers = nil
	}
	b, set, err := assemble(c.catalogTools(), c, snapshot, bindings.BrokerConfig{Logger: log}, log)
	if err != nil {
		close()
		return nil, nil, nil, err.Error()
	}
	return b, set, close, ""
}
