package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/local"
	"github.com/sandcall/sandcall/tools/search"
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
			Trust: c.serverTrust(), Root: c.root(), Background: mode == live && !c.oneShot, Want: c.needs,
			Env: c.passEnv(), Audit: bc.Audit})
		c.upstream = set
		c.closers = append(c.closers, set.Close)
	}
	// HTTP APIs from their OpenAPI descriptions (openapi.go): each loads
	// in the background; a snapshot waits for them, as for upstreams.
	actx := context.Background()
	if mode == snapshot {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(actx, snapshotAttachTimeout)
		defer cancel()
	}
	api := c.attachOpenAPI(actx, cat, mode == snapshot, log)
	c.api = api
	c.closers = append(c.closers, api.close)
	bc.Catalog = cat
	broker, err := bindings.NewBroker(bc)
	if err != nil {
		return nil, nil, err
	}
	unavailable, pending := c.unavailable(set), c.pending(set)
	broker.SetUnavailable(func(name string) (bindings.Unavailability, bool) {
		if u, ok := unavailable(name); ok {
			return u, true
		}
		return api.unavailable(name)
	})
	broker.SetPending(func(ctx context.Context, name string) bool {
		return pending(ctx, name) || api.pending(ctx, name)
	})
	broker.SetNotes(func() []string {
		var notes []string
		if set != nil {
			notes = serverNotes(set)
		}
		return append(notes, api.notes()...)
	})
	c.programsAfter(cat, mode, log) // programs.go: saved programs, and reloads for serve and run
	// search_tools and describe_tools (docs/mcp.md). A tool already named
	// so (a local script, say) keeps the name, and discovery is off.
	var so search.Options
	if c.cfg != nil {
		if so, err = c.cfg.Search.Config().Options(); err != nil {
			return nil, nil, fmt.Errorf("search: %w", err)
		}
	}
	if err := bindings.AddDiscoveryWith(broker, so); err != nil {
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

// unavailable tells the broker why a called name the catalog lacks is not
// callable, when a source knows: an upstream tool disabled because its
// definition changed since it was approved; a tool of a server that is
// not up (failed, not trusted, disabled, invalid, sandcall itself, not
// started by `run`); a script not trusted (new, or changed since it was
// trusted). A known server's tool is never said not to exist.
func (c *common) unavailable(set *upstream.Set) func(string) (bindings.Unavailability, bool) {
	return func(name string) (bindings.Unavailability, bool) {
		if set != nil {
			if srv, ok := set.Disabled()[name]; ok {
				return bindings.Unavailability{
					Message: fmt.Sprintf("tool %s of server %q is disabled: its definition changed since it was approved", name, srv),
					Hint: "A person re-enables it after reviewing the change with `sandcall tools approve " + name +
						"`; until then tell the user, or use another tool.",
					Rule: "upstream.pin_changed",
				}, true
			}
			if srv, ok := set.ServerOf(name); ok {
				if st, _ := set.Status(srv); st.State != upstream.StateUp {
					return serverUnavailable(name, st), true
				}
			}
		}
		if c.localSet != nil {
			if why, ok := c.localSet.Unavailable(name); ok {
				return bindings.Unavailability{Message: fmt.Sprintf("tool %s is not available: %s", name, why),
					Hint: local.UntrustedHint, Rule: "local.untrusted"}, true
			}
		}
		return bindings.Unavailability{}, false
	}
}

// serverUnavailable is why the tool name of a server that is not up cannot
// be called, and what can be done about it.
func serverUnavailable(name string, st upstream.Status) bindings.Unavailability {
	u := bindings.Unavailability{Message: fmt.Sprintf("tool %s is not available: %s", name, st.Line()), Rule: "upstream." + strings.ReplaceAll(string(st.State), " ", "_")}
	switch st.State {
	case upstream.StateStarting:
		u.Code, u.Hint = sandbox.EToolFailed, "Try the call again in a moment."
	case upstream.StateFailed:
		u.Code, u.Hint = sandbox.EToolFailed, fmt.Sprintf("Tell the user the server could not start and why; 'sandcall servers test %s' shows its error. sandcall keeps retrying it.", st.Server)
	case upstream.StateUntrusted:
		u.Hint = "A person reviews the server's definition, then runs 'sandcall servers trust' in the project; until then, tell the user or use another tool."
	case upstream.StateDisabled:
		u.Hint = fmt.Sprintf("A person enables it with 'sandcall servers enable %s' (it starts at the next start of sandcall); until then, use another tool.", st.Server)
	case upstream.StateInvalid:
		u.Code, u.Hint = sandbox.EToolFailed, "Tell the user the server's definition needs fixing ('sandcall servers list' shows the error)."
	case upstream.StateSelf:
		u.Hint = "This sandcall runs your program: call the tools it lists directly, in this program, instead of a nested run_code."
	case upstream.StateNotStarted:
		u.Code, u.Hint = sandbox.EToolFailed, fmt.Sprintf("Write the tool's name in the program (tools.%s) so that sandcall run starts its server.", name)
	}
	return u
}

// serverNotes says which configured servers are not up, and why, one
// sentence each (for search_tools' hint). Disabled servers and sandcall
// itself are left out: nothing is missing that anyone expects.
func serverNotes(set *upstream.Set) []string {
	var out []string
	for _, st := range set.Statuses() {
		switch st.State {
		case upstream.StateStarting, upstream.StateFailed, upstream.StateUntrusted, upstream.StateInvalid:
			out = append(out, st.Line())
		}
	}
	return out
}

// serverRow is the status a `tools list` row gives a server that is not
// up.
func serverRow(st upstream.Status) string {
	cause := oneLine(st.Cause)
	switch st.State {
	case upstream.StateStarting:
		return "server still starting"
	case upstream.StateFailed:
		return "server failed to start: " + cause
	case upstream.StateUntrusted:
		return "server not trusted (" + cause + "): run 'sandcall servers trust' after reviewing it"
	case upstream.StateDisabled:
		return "server disabled (\"enabled\": false in " + st.Source + ")"
	case upstream.StateInvalid:
		return "server invalid: " + cause
	case upstream.StateSelf:
		return "sandcall itself: never started (its tools are this sandcall's)"
	}
	return "server " + string(st.State) + ": " + cause
}

// pending makes a call to a name the catalog lacks wait while its source
// catches up: a script created or trusted since the directory was last
// read is read now; a tool of a server still starting waits for it
// (bounded by the server's start timeout and the call's context).
func (c *common) pending(set *upstream.Set) func(context.Context, string) bool {
	return func(ctx context.Context, name string) bool {
		if c.localSet != nil && c.localSet.Pending(name) {
			return true
		}
		if set == nil {
			return false
		}
		srv, ok := set.ServerOf(name)
		if !ok {
			return false
		}
		if st, _ := set.Status(srv); st.State != upstream.StateStarting {
			return false
		}
		set.Wait(ctx, srv)
		return true
	}
}

// listWait bounds how long tools/list waits for upstream servers still
// starting: long enough for an npx server with a cold cache (about 5 s),
// short enough that a hung server (its own timeout may be minutes) does
// not hold every client's tool list.
const listWait = 15 * time.Second

// waitForSources makes the MCP server answer what a client asks as the
// catalog will be, not as it is while upstream servers start in the
// background: tools/list waits until every server's first attempt is over
// (at most listWait), and tools/call of a name the catalog lacks waits for
// its source (a server starting, bounded by its start timeout; a script
// just added); the tool list is then synced (refresh). So a one-shot
// client — which initializes, lists, calls and exits — reaches upstream
// tools. initialize is still answered at once, and a server that comes up
// later reaches clients as notifications/tools/list_changed.
func (c *common) waitForSources(cat *tools.Catalog, refresh func() error) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				if set := c.upstream; set != nil {
					wait := time.NewTimer(listWait)
					select {
					case <-set.Ready():
					case <-wait.C:
					case <-ctx.Done():
					}
					wait.Stop()
					_ = refresh()
				}
			case "tools/call":
				p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
				if !ok || p == nil {
					break
				}
				if _, _, known := cat.Resolve(p.Name); known {
					break
				}
				if c.pending(c.upstream)(ctx, p.Name) {
					_ = refresh()
				}
				if _, _, known := cat.Resolve(p.Name); known {
					break
				}
				// A known source's tool that is not available: say why, as
				// a program's call would, rather than "unknown tool".
				if u, ok := c.unavailable(c.upstream)(p.Name); ok {
					code := u.Code
					if code == "" {
						code = sandbox.EToolDenied
					}
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
						Text: fmt.Sprintf("%s: %s\nhint: %s", code, u.Message, u.Hint)}}}, nil
				}
			}
			return next(ctx, method, req)
		}
	}
}

// catalogFlags registers the flags that say where a command finds its
// tools and its configuration on fs: the same for every command that reads
// them (serve, run, tools, policy, servers), so that each answers what the
// server does.
func (c *common) catalogFlags(fs *flag.FlagSet, policyUsage string) {
	fs.StringVar(&c.config, "config", "", "the operator's config file (default: "+defaultConfigFile+" in the working directory, "+
		"whose keys that run code, send data elsewhere or pass secrets need 'sandcall servers trust'); its policy applies")
	fs.StringVar(&c.policy, "policy", "", policyUsage)
	fs.BoolVar(&c.demo, "demo", false, "include the embedded demo toolsets (the expense tools and ping)")
	fs.StringVar(&c.demoInbox, "demo-inbox", "", "include the support-inbox demo tools (information flow; see 'sandcall demo inbox'): "+
		"clean, or injected (one message carries a prompt injection)")
	fs.StringVar(&c.toolsDir, "tools-dir", "",
		"the operator's directory of local script tools (default: the project's "+local.DefaultDir+", whose scripts need 'sandcall servers trust'); reloaded when it changes")
	fs.Var(&c.mcpFiles, "mcp-config", "read upstream MCP servers from FILE only (repeatable), not from the project's .mcp.json and friends: "+
		"a file only sandcall reads, when the client's config lists sandcall itself")
	fs.Var(&c.envPass, "env", "pass the variable NAME of this environment to local script tools and stdio upstream servers "+
		"(repeatable; adds to env_passthrough in the config file)")
	fs.BoolVar(&c.trustProject, "trust-project", false,
		"use the project's MCP servers, "+local.DefaultDir+" scripts and sandcall.yaml as they are, without 'sandcall servers trust' (CI, a checkout you own)")
}

// serverTrust is the upstream servers' trust check: nil (every server may
// start) with --trust-project.
func (c *common) serverTrust() func(upstream.Entry) error {
	if c.trustProject {
		return nil
	}
	c.setupTrust()
	return c.pt.server
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
