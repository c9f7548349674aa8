package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/local"
	"github.com/sandcall/sandcall/tools/programs"
	"github.com/sandcall/sandcall/tools/upstream"
)

// Programs that last (docs/programs.md): the project's .agents/programs
// files and the programs models saved with save_program are tools of the
// catalog every command assembles, and programs keep state between runs.
// assemble calls programsBefore and programsAfter; newRunner calls
// programsRunner. Nothing else of the wiring knows about programs.

// programsConfig is sandcall.yaml's programs section.
type programsConfig struct {
	// Dir holds the project's program files; if empty, .agents/programs in
	// the working directory.
	Dir string `yaml:"dir"`
	// MaxDepth is how deep programs may call programs; if 0, 3.
	MaxDepth int `yaml:"max_depth"`
	// MaxSaved caps the programs one principal saves; if 0, 100.
	MaxSaved int `yaml:"max_saved"`
	// Save offers the save_program tool; if absent, true.
	Save *bool `yaml:"save"`
}

func (p *programsConfig) check() error {
	if p.MaxDepth < 0 || p.MaxDepth > 16 {
		return fmt.Errorf("programs.max_depth: want 0 (the default, 3) to 16, got %d", p.MaxDepth)
	}
	if p.MaxSaved < 0 {
		return fmt.Errorf("programs.max_saved must not be negative")
	}
	return nil
}

// stateConfig is sandcall.yaml's state section: the bounds of the state
// programs keep between runs.
type stateConfig struct {
	TTL      string `yaml:"ttl"`
	MaxTTL   string `yaml:"max_ttl"`
	MaxKeys  int    `yaml:"max_keys"`
	MaxBytes int64  `yaml:"max_bytes"`

	ttl, maxTTL time.Duration
}

func (s *stateConfig) check() error {
	var err error
	if s.TTL != "" {
		if s.ttl, err = time.ParseDuration(s.TTL); err != nil || s.ttl <= 0 {
			return fmt.Errorf("state.ttl: want a duration such as 24h, got %q", s.TTL)
		}
	}
	if s.MaxTTL != "" {
		if s.maxTTL, err = time.ParseDuration(s.MaxTTL); err != nil || s.maxTTL <= 0 {
			return fmt.Errorf("state.max_ttl: want a duration such as 720h, got %q", s.MaxTTL)
		}
	}
	if s.ttl > 0 && s.maxTTL > 0 && s.ttl > s.maxTTL {
		return fmt.Errorf("state.ttl (%s) is over state.max_ttl (%s)", s.ttl, s.maxTTL)
	}
	if s.MaxKeys < 0 || s.MaxBytes < 0 {
		return fmt.Errorf("state.max_keys and state.max_bytes must not be negative")
	}
	return nil
}

// programState is what a command assembled of programs.
type programState struct {
	reg   *programs.Registry
	dir   *programs.Dir   // nil without a programs directory
	finds []local.Finding // what loading the directory found
	saved *programs.Saved // nil when save_program is off
	store store.Space     // where saved programs are kept
	cfg   programsConfig
}

// programsDir returns the programs directory and whether there is one.
func (c *common) programsDir() (string, bool) {
	if c.cfg != nil && c.cfg.Programs.Dir != "" {
		return c.cfg.path(c.cfg.Programs.Dir), true
	}
	if fi, err := os.Stat(programs.DefaultDir); err == nil && fi.IsDir() {
		return programs.DefaultDir, true
	}
	return "", false
}

// programsBefore adds the program tools of the project's directory and
// save_program to ts, and sets bc's program and state bounds. It runs
// before the catalog is built.
func (c *common) programsBefore(ts []*tools.Tool, mode assembleMode, bc bindings.BrokerConfig, log *slog.Logger) ([]*tools.Tool, bindings.BrokerConfig) {
	ps := &programState{reg: programs.NewRegistry()}
	if c.cfg != nil {
		ps.cfg = c.cfg.Programs
		s := c.cfg.State
		bc.State = bindings.StateConfig{TTL: s.ttl, MaxTTL: s.maxTTL, MaxKeys: s.MaxKeys, MaxBytes: s.MaxBytes}
	}
	c.progs = ps
	bc.Programs = ps.reg
	bc.MaxProgramDepth = ps.cfg.MaxDepth
	taken := map[string]bool{}
	for _, t := range ts {
		taken[t.Name] = true
	}
	reserved := reservedNames(c.upstreamConfig())
	if dir, ok := c.programsDir(); ok {
		explicit := c.cfg != nil && c.cfg.Programs.Dir != ""
		// Project trust: the same check as the project's scripts
		// (trust.go). TODO(trust): when project trust moves out of the
		// checkout (issue 31), call the trust session's check for
		// .agents/programs here as scriptTrust is called for .agents/tools.
		d, finds := programs.LoadDir(ps.reg, programs.DirConfig{Dir: dir, Logger: log,
			Trusted: scriptTrust(c.trustProject, explicit),
			Reserved: func(name string) string {
				if taken[name] || name == programs.SaveToolName {
					return "a tool named " + name + " already exists"
				}
				return reserved(name)
			}})
		ps.dir, ps.finds = d, finds
		for _, f := range finds {
			if f.Reason != "" {
				log.Warn("program skipped", "file", f.File, "reason", f.Reason, "line", f.Line)
			}
		}
		ts = append(ts, d.Tools()...)
	}
	if ps.cfg.Save == nil || *ps.cfg.Save {
		ps.store = c.programStore(mode, log)
		ps.saved = programs.NewSaved(ps.reg, programs.SavedConfig{Store: ps.store, MaxPerPrincipal: ps.cfg.MaxSaved,
			Reserved: reserved, Logger: log})
		ts = append(ts, programs.SaveTool(ps.saved))
	}
	return ts, bc
}

// programStore is where saved programs are kept: the configured shared
// store (Redis: every replica sees each save), else this process's memory
// (a snapshot command without one sees none).
func (c *common) programStore(mode assembleMode, log *slog.Logger) store.Space {
	if sp, ok := c.shared.(store.Space); ok {
		return sp
	}
	if mode == snapshot && c.cfg != nil && c.cfg.Store != "" && c.cfg.Store != "memory:" {
		if st, err := store.Open(c.cfg.Store); err == nil {
			c.closers = append(c.closers, func() { st.Close() })
			if sp, ok := st.(store.Space); ok {
				return sp
			}
		} else {
			log.Warn("saved programs: the store cannot be opened", "err", err)
		}
	}
	return store.NewMemory()
}

// programsAfter brings the saved programs into cat and, for serve and run,
// keeps the programs directory and the saved programs in step with it.
func (c *common) programsAfter(cat *tools.Catalog, mode assembleMode, log *slog.Logger) {
	ps := c.progs
	if ps == nil {
		return
	}
	if ps.dir != nil {
		for _, f := range ps.dir.AddTo(cat) {
			log.Warn("program skipped", "file", f.File, "reason", f.Reason)
		}
	}
	if ps.saved != nil {
		ps.saved.AddTo(cat)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := ps.saved.Sync(ctx); err != nil {
			log.Warn("saved programs: the store is unavailable; retrying in the background", "err", err)
		}
		cancel()
	}
	if mode != live {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.closers = append(c.closers, cancel)
	if ps.dir != nil {
		go ps.dir.Watch(ctx, time.Second)
	}
	if ps.saved != nil {
		go ps.saved.Watch(ctx, time.Second)
	}
}

// programsRunner makes r run the program tools.
func (c *common) programsRunner(r *bindings.Runner) {
	if c.progs != nil {
		c.progs.reg.SetRunner(r)
	}
}

// programsExecutor is the executor of the programs program tools run, for
// RunnerConfig.ProgramExecutor: nil (the runner's own) except for a
// one-shot command in the process tier, whose one worker is the program's.
func (c *common) programsExecutor(limits sandbox.Limits, log *slog.Logger) sandbox.Executor {
	if !c.oneShot || c.isolation == "inprocess" || c.progs == nil || len(c.progs.reg.Programs()) == 0 {
		return nil
	}
	l := &lazyExecutor{start: func() (sandbox.Executor, func(), error) {
		cc := *c
		cc.oneShot, cc.workers, cc.pool = false, 1, nil
		ex, _, closeEx, err := newExecutorWith(&cc, limits, log, nil)
		return ex, closeEx, err
	}}
	c.closers = append(c.closers, l.close)
	return l
}

// trustPrograms records the project's program files as trusted, for
// `sandcall servers trust`, printing each; it returns how many.
// TODO(trust): move with the trust session's rework of servers trust.
func trustPrograms(w io.Writer, t *upstream.Trust, root string) int {
	dir := filepath.Join(root, programs.DefaultDir)
	des, _ := os.ReadDir(dir)
	var names []string
	for _, de := range des {
		if de.Type().IsRegular() || de.Type()&os.ModeSymlink != 0 {
			names = append(names, de.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		t.TrustScript(filepath.Join(dir, name), b)
		fmt.Fprintf(w, "trusted program %s\n", filepath.Join(programs.DefaultDir, name))
	}
	return len(names)
}

// lazyExecutor starts its executor at its first job.
type lazyExecutor struct {
	start func() (sandbox.Executor, func(), error)
	once  sync.Once
	ex    sandbox.Executor
	stop  func()
	err   error
}

func (l *lazyExecutor) Execute(ctx context.Context, job *sandbox.Job, host sandbox.Host) *sandbox.Outcome {
	l.once.Do(func() { l.ex, l.stop, l.err = l.start() })
	if l.err != nil || l.ex == nil {
		return &sandbox.Outcome{Err: sandbox.Errorf(sandbox.EInternal, "Run the program with sandcall serve, or call the inner program's tools directly.",
			"the worker pool of the programs this program calls could not start")}
	}
	return l.ex.Execute(ctx, job, host)
}

// close stops the executor, if it started, and keeps it from starting.
func (l *lazyExecutor) close() {
	l.once.Do(func() {})
	if l.stop != nil {
		l.stop()
	}
}

// programRows are `tools list`'s rows for the program files that are not
// tools, and why.
func (c *common) programRows() []toolRow {
	if c.progs == nil {
		return nil
	}
	var rows []toolRow
	for _, f := range c.progs.finds {
		if f.Reason == "" {
			continue
		}
		name := f.Tool
		if name == "" {
			name = f.File
		}
		rows = append(rows, toolRow{Name: name, Source: programs.SourceFile, Callers: []string{}, Status: "skipped: " + f.Reason})
	}
	return rows
}
