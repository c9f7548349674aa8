package cli

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/cli/config"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/local"
	"github.com/sandcall/sandcall/tools/programs"
)

// Programs that last (docs/programs.md): the project's .agents/programs
// files and the programs models saved with save_program are tools of the
// catalog every command assembles, and programs keep state between runs.
// assemble calls programsBefore and programsAfter; newRunner calls
// programsRunner. Nothing else of the wiring knows about programs.

// programState is what a command assembled of programs.
type programState struct {
	reg   *programs.Registry
	dir   *programs.Dir   // nil without a programs directory
	finds []local.Finding // what loading the directory found
	saved *programs.Saved // nil when save_program is off
	store store.Space     // where saved programs are kept
	cfg   config.Programs
}

// programsDir returns the programs directory and whether there is one.
func (c *common) programsDir() (string, bool) {
	if c.cfg != nil && c.cfg.Programs.Dir != "" {
		return c.cfg.Programs.Dir, true // made absolute by config.Load
	}
	dir := filepath.Join(c.root(), programs.DefaultDir)
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir, true
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
		bc.State = bindings.StateConfig{TTL: s.TTLDuration(), MaxTTL: s.MaxTTLDuration(), MaxKeys: s.MaxKeys, MaxBytes: s.MaxBytes}
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
		// Project trust: the same check, by content, as the project's
		// scripts (trust.go); a directory the configuration names is the
		// operator's (a project's programs: key needs trust itself).
		var trusted func(path, sum string) bool
		if explicit := c.cfg != nil && c.cfg.Programs.Dir != ""; !explicit && !c.trustProject {
			c.setupTrust()
			// The sum is of the text the tool is made from: what was
			// checked is what runs.
			trusted = func(path, sum string) bool { return c.pt.script(path, sum) == nil }
		}
		d, finds := programs.LoadDir(ps.reg, programs.DirConfig{Dir: dir, Logger: log,
			Trusted: trusted,
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
