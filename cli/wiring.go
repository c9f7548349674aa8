package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/audit"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/cli/config"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/examples/inbox"
	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/confine"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/process"
	"github.com/sandcall/sandcall/sandbox/ts"
	"github.com/sandcall/sandcall/sandbox/wasm"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/local"
	"github.com/sandcall/sandcall/tools/projfile"
	"github.com/sandcall/sandcall/tools/upstream"
)

// common holds the flags shared by serve and run.
type common struct {
	oneShot   bool // the command runs one program: start one worker, never refill
	demo      bool
	demoInbox string // "", "clean" or "injected": the support-inbox demo tools (demo_inbox.go)
	isolation string
	workers   int
	reuse     int // runs per worker (--worker-reuse)

	// The process tier's pool and, for a one-shot command, whether its
	// confinement report came from the probe cache (see newExecutorWith).
	pool        *process.Pool
	probeCached bool
	forgetProbe func()
	tracer      trace.TracerProvider // nil: tracing off (otel.go)
	timeout     time.Duration
	logLevel    string
	policy      string
	config      string
	audit       string

	// prestarted is the executor a one-shot command started before
	// building its catalog (prestart.go); newRunner takes it.
	prestarted *prestartedExecutor

	// Local script tools (tools_cmd.go).
	// needs, if set, picks the upstream servers to start (run: those
	// the program names).
	needs func(server string) bool

	envPass     multiFlag // --env NAME
	mcpFiles    multiFlag // --mcp-config FILE: read these MCP configs only
	configFiles multiFlag // servers --config-file FILE: read these before the project's
	rootDir     string    // servers --root: the project root ("" is the working directory)

	toolsDir     string
	trustProject bool // --trust-project: the project's servers and scripts run untrusted (trust.go)
	toolsTimeout time.Duration
	localSet     *local.Set
	localFinds   []local.Finding // what loading the directory found (skipped files too)

	upstream *upstream.Set // the upstream servers assemble attached
	pt       *projectTrust // the project's trust (trust.go), opened by loadConfig
	warns    *warnOnce     // warnings for the person running the command, each once
	adopted  []string      // MCP configs a sandcall entry of the project reads (precedence.go)
	adoptOK  bool          // adopted is computed
	stderrTo io.Writer     // where warnings go; nil is os.Stderr

	cfg     *config.File       // loaded by loadConfig
	api     *apiSources        // the OpenAPI sources (openapi.go), set by assemble
	progs   *programState      // programs and their registry (programs.go)
	metrics *mcpserver.Metrics // set by serve over HTTP
	shared  store.Store        // the config's store: (nil: none configured)
	closers []func()
}

// register registers the flags of serve and run: every source flag
// (catalogFlags) and those of running programs.
func (c *common) register(fs *flag.FlagSet) {
	c.catalogFlags(fs, "policy file (see 'sandcall policy'); reloaded when it changes or on SIGHUP. Default: destructive tools direct-only, everything else both")
	fs.StringVar(&c.isolation, "isolation", "process",
		"isolation tier: process (each program in its own confined worker process; see 'sandcall doctor') "+
			"or inprocess (inside this process: for tests and trusted code, not a security boundary)")
	fs.IntVar(&c.workers, "workers", 0, "warm worker processes kept ready at rest (process tier; more start with demand, up to one per CPU); 0 means 1")
	fs.IntVar(&c.reuse, "worker-reuse", defaultWorkerReuse,
		"runs of one principal a worker serves before it is replaced (process tier); 1 means one run per worker, 0 the default")
	fs.DurationVar(&c.timeout, "timeout", sandbox.DefaultLimits().Timeout,
		fmt.Sprintf("wall-time limit per run: the default and the ceiling of run_code's timeout_ms (at most %s)", sandbox.MaxTimeout))
	fs.StringVar(&c.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
	fs.StringVar(&c.audit, "audit", "", "write audit records (JSON Lines, one per run and per attempted call) to this file, or - for stderr")
	fs.DurationVar(&c.toolsTimeout, "tools-timeout", local.DefaultTimeout, "time limit of one local script tool call")
}

// registerPolicy registers --policy, --config and --audit (demo has its
// own flag set).
func (c *common) registerPolicy(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "config file (default: "+defaultConfigFile+" in the working directory, if present)")
	fs.StringVar(&c.audit, "audit", "", "write audit records (JSON Lines, one per run and per attempted call) to this file, or - for stderr")
	fs.StringVar(&c.policy, "policy", "",
		"policy file (see 'sandcall policy'); reloaded when it changes or on SIGHUP. Default: destructive tools direct-only, everything else both")
}

// loadConfig reads the config file and fills in every flag the command
// line did not set. It returns a message for the user on an error.
func (c *common) loadConfig(fs *flag.FlagSet) string {
	c.setupTrust()
	var trusted func(rel, hash string) bool
	if !c.trustProject {
		trusted = c.pt.config
	}
	l, err := config.Load(config.Options{Explicit: c.config, Root: c.root(), Trusted: trusted})
	if err != nil {
		return err.Error()
	}
	if len(l.Ignored) > 0 {
		c.warn(ignoredKeysMessage(l))
	}
	cfg := l.File
	c.cfg = cfg
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["policy"] && cfg.Policy != "" {
		c.policy = cfg.Policy
		if l.ProjectPolicy {
			if _, inside, err := projfile.Inside(c.root(), c.policy); err == nil && !inside {
				return fmt.Sprintf("%s: policy %s: %v", l.ProjectRel, c.policy, projfile.ErrOutside)
			}
		}
	}
	if c.policy != "" {
		// Bounded, and never a device or a FIFO, which would block.
		if _, err := projfile.Read(c.policy, policy.MaxFileBytes, ""); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "policy " + err.Error()
		}
	}
	if !set["audit"] && cfg.Audit != "" {
		c.audit = cfg.Audit
	}
	if t := cfg.Limits.TimeoutDuration(); !set["timeout"] && t > 0 {
		c.timeout = t
	}
	if !set["workers"] && cfg.Workers > 0 {
		c.workers = cfg.Workers
	}
	if !set["worker-reuse"] && cfg.Pool.WorkerReuse > 0 {
		c.reuse = cfg.Pool.WorkerReuse
	}
	return ""
}

// stderr is where the command's warnings go.
func (c *common) stderr() io.Writer {
	if c.stderrTo != nil {
		return c.stderrTo
	}
	return os.Stderr
}

// warn tells the person running the command, once.
func (c *common) warn(msg string) {
	if c.warns == nil {
		c.warns = &warnOnce{w: c.stderr()}
	}
	c.warns.warn(msg)
}

// setupTrust opens the project's trust, once.
func (c *common) setupTrust() {
	if c.pt == nil {
		c.pt = openProjectTrust(c.root(), c.trustProject, append(append([]string(nil), c.mcpFiles...), c.configFiles...), c.warn)
	}
}

// root is the project root: the working directory, or servers --root.
func (c *common) root() string {
	if c.rootDir != "" {
		return c.rootDir
	}
	return "."
}

// auditLogger opens the audit destination: nil when none is configured.
// The records' format is package audit's; docs/operations.md lists their
// fields.
func (c *common) auditLogger(stderr io.Writer) (*slog.Logger, error) {
	var w io.Writer
	switch c.audit {
	case "":
		return nil, nil
	case "-":
		w = stderr
	default:
		f, err := os.OpenFile(c.audit, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("--audit: %w", err)
		}
		c.closers = append(c.closers, func() { _ = f.Close() })
		w = f
	}
	return audit.NewLogger(w), nil
}

// check validates the shared flags; it returns a usage error message.
func (c *common) check() string {
	switch c.isolation {
	case "inprocess", "process":
	default:
		return fmt.Sprintf("unknown --isolation %q: want process or inprocess", c.isolation)
	}
	if c.workers < 0 {
		return "--workers must be 0 or more"
	}
	if c.reuse < 0 {
		return "--worker-reuse must not be negative"
	}
	if c.timeout <= 0 || c.timeout > sandbox.MaxTimeout {
		return fmt.Sprintf("--timeout must be greater than 0 and at most %s", sandbox.MaxTimeout)
	}
	for _, n := range c.envPass {
		if !envNameRE().MatchString(n) {
			return fmt.Sprintf("--env %q: want a variable name (letters, digits and _)", n)
		}
	}
	if _, ok := parseLevel(c.logLevel); !ok {
		return fmt.Sprintf("unknown --log-level %q: want debug, info, warn or error", c.logLevel)
	}
	switch c.demoInbox {
	case "", "clean", "injected":
	default:
		return fmt.Sprintf("unknown --demo-inbox %q: want clean or injected", c.demoInbox)
	}
	return ""
}

func parseLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, true
	case "info":
		return slog.LevelInfo, true
	case "warn", "warning":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	}
	return 0, false
}

// logger writes text logs to w (stderr: stdout may be the protocol stream).
func (c *common) logger(w io.Writer) *slog.Logger {
	lvl, _ := parseLevel(c.logLevel)
	return slog.New(tools.NewRedactHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl})))
}

// catalogTools returns the tools the flags enable: the demo tools with
// --demo, then the local script tools (see localTools in tools_cmd.go).
func (c *common) catalogTools() []*tools.Tool {
	var ts []*tools.Tool
	if c.demo {
		ts = demo.Tools()
	}
	if c.demoInbox != "" {
		ts = append(ts, inbox.New(c.demoInbox == "injected").Tools()...)
	}
	return c.localTools(ts)
}

// newRunner wires the catalog assemble builds from ts (with the upstream
// servers, the discovery tools and c's policy) and the executor of c's
// isolation tier. close releases the executor (it kills
// the worker pool); call it when done.
func newRunner(ts []*tools.Tool, c *common, log *slog.Logger) (r *bindings.Runner, close func(), err error) {
	closeAll := func() {
		c.dropPrestarted()
		for i := len(c.closers) - 1; i >= 0; i-- {
			c.closers[i]()
		}
		c.closers = nil
	}
	audit, err := c.auditLogger(os.Stderr)
	if err != nil {
		closeAll() // the upstream servers already started
		return nil, nil, err
	}
	bc := bindings.BrokerConfig{Logger: log, Audit: audit, Tracer: c.tracer}
	var mods *bindings.ModuleStore
	if c.cfg != nil && c.cfg.Store != "" && c.cfg.Store != "memory:" {
		st, err := store.Open(c.cfg.Store)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		c.shared = st
		c.closers = append(c.closers, func() { st.Close() })
		bc.Shared = st
		mods = bindings.NewSharedModuleStore(0, st)
	}
	if c.metrics != nil {
		bc.Observer = c.metrics
	}
	limits := c.runLimits()
	if cfg := c.cfg; cfg != nil {
		bc.ApprovalTimeout = cfg.Limits.ApprovalTimeoutDuration()
	}
	broker, _, err := assemble(ts, c, live, bc, log)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	cat := broker.Catalog()
	exec, tier, closeExec, err := c.takeExecutor(limits.Resolve(), log)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	close = func() { closeExec(); closeAll() }
	r, err = bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: exec, Limits: limits, Tier: tier, Modules: mods,
		Languages:       []sandbox.Language{sandbox.JavaScript, sandbox.TypeScript, sandbox.WASM},
		ProgramExecutor: c.programsExecutor(limits.Resolve(), log)})
	if err != nil {
		close()
		return nil, nil, err
	}
	c.programsRunner(r)    // programs.go
	c.watchLocalTools(cat) // local tools reload until close
	return r, close, nil
}

// keepPolicy puts the policy file at path in force on b, reloading it when
// it changes (polled every second) or on SIGHUP; stop ends both. Without a
// path, the broker keeps the default policy.
func keepPolicy(path string, b *bindings.Broker, log *slog.Logger) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	pf, err := bindings.LoadPolicyFile(path, b, log)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				_, _ = pf.Reload() // an invalid file is logged and ignored
			}
		}
	}()
	go pf.Watch(ctx, time.Second)
	return func() { signal.Stop(hup); cancel() }, nil
}

// newExecutor returns the executor of c's isolation tier and its name.
func newExecutor(c *common, limits sandbox.Limits, log *slog.Logger) (sandbox.Executor, string, func(), error) {
	return newExecutorWith(c, limits, log, nil)
}

// newExecutorWith is newExecutor with a hook called with each worker's PID.
func newExecutorWith(c *common, limits sandbox.Limits, log *slog.Logger, onStart func(pid int) error) (sandbox.Executor, string, func(), error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if c.isolation == "inprocess" {
		log.Warn("isolation inprocess: programs run inside this process; this is not a security boundary")
		// wazero's interpreter only: its compiler can be driven to minutes
		// of compile time or frozen by guest code, which only a worker
		// process may suffer.
		w, err := wasm.New(wasm.Config{})
		if err != nil {
			return nil, "", nil, err
		}
		eng := js.New(js.Config{})
		langs := sandbox.Languages{sandbox.JavaScript: eng, sandbox.TypeScript: ts.New(ts.Config{JS: eng}), sandbox.WASM: w}
		return langs, "inprocess", func() { _ = w.Close(context.Background()) }, nil
	}
	reuse := c.reuse
	if reuse <= 0 {
		reuse = defaultWorkerReuse // a command without the flag (demo)
	}
	if c.oneShot {
		reuse = 1 // one program: nothing to reuse
	}
	args := workerArgs(limits, !c.oneShot, reuse)
	// A one-shot command (`sandcall run`) keeps the probe's report in the
	// user's cache rather than starting a probe worker before every run;
	// a server probes at each start.
	var rep confine.Report
	if c.oneShot {
		rep, c.probeCached = confine.ProbeCached(confine.Config{WorkerArgs: args}, probeCacheDir())
		c.forgetProbe = func() { confine.ForgetProbe(confine.Config{WorkerArgs: args}, probeCacheDir()) }
	} else {
		rep = confine.Probe(confine.Config{WorkerArgs: args})
	}
	for _, l := range rep.Layers {
		if !l.Active {
			log.Info("confinement layer skipped", "layer", l.Layer, "reason", l.Reason)
		}
	}
	env := append(rep.Environ(),
		// Collecting before the memory limit is wasted work within a short
		// job, so the limit itself (set by the worker from the job's
		// limits) is the collector's only trigger; a reused worker
		// collects between jobs.
		"GOGC=off")
	size := c.workers
	if c.oneShot {
		size = 1
	}
	var pc config.Pool
	if c.cfg != nil {
		pc = c.cfg.Pool
	}
	pool, err := process.New(process.Config{
		Command:      append([]string{confine.SelfExe}, args...),
		Size:         size,
		Reuse:        reuse,
		MaxRunning:   pc.MaxRunning,
		Queue:        pc.Queue,
		QueueTimeout: pc.QueueTimeoutDuration(),
		MaxRSS:       int64(pc.MaxWorkerRSSMB) << 20,
		NoRefill:     c.oneShot,
		MemoryBytes:  limits.MemoryBytes,
		SysProcAttr:  rep.SysProcAttr(),
		Env:          env,
		Logger:       log,
		OnStart:      onStart,
	})
	if err != nil {
		return nil, "", nil, err
	}
	c.pool = pool
	return pool, rep.Tier(), func() { _ = pool.Close() }, nil
}
