package cli

import (
	"log/slog"

	"github.com/sandcall/sandcall/sandbox"
)

// prestartedExecutor is an executor started ahead of newRunner.
type prestartedExecutor struct {
	limits sandbox.Limits // resolved: what it was started for
	exec   sandbox.Executor
	tier   string
	close  func()
	err    error
}

// runLimits are the per-run limits of c's flags and config file, before
// Resolve: what newRunner gives the Runner.
func (c *common) runLimits() sandbox.Limits {
	limits := sandbox.Limits{Timeout: c.timeout}
	if cfg := c.cfg; cfg != nil {
		limits.MemoryBytes = int64(cfg.Limits.MemoryMB) << 20
		limits.MaxCalls = cfg.Limits.MaxCalls
	}
	return limits
}

// prestart starts a one-shot command's process-tier executor now, so that
// its worker starts while the command builds its catalog (the demo
// toolsets, the local scripts, the named upstream servers): newRunner takes
// it instead of starting its own. The in-process tier has nothing to start.
func (c *common) prestart(log *slog.Logger) {
	if !c.oneShot || c.isolation != "process" {
		return
	}
	limits := c.runLimits().Resolve()
	exec, tier, closeExec, err := newExecutor(c, limits, log)
	c.prestarted = &prestartedExecutor{limits: limits, exec: exec, tier: tier, close: closeExec, err: err}
}

// takeExecutor returns the prestarted executor if it was started for
// limits, and otherwise starts one (newExecutor).
func (c *common) takeExecutor(limits sandbox.Limits, log *slog.Logger) (sandbox.Executor, string, func(), error) {
	p := c.prestarted
	c.prestarted = nil
	if p != nil {
		if p.limits == limits {
			return p.exec, p.tier, p.close, p.err
		}
		if p.err == nil {
			p.close()
		}
	}
	return newExecutor(c, limits, log)
}

// dropPrestarted closes a prestarted executor newRunner did not take.
func (c *common) dropPrestarted() {
	if p := c.prestarted; p != nil {
		c.prestarted = nil
		if p.err == nil {
			p.close()
		}
	}
}
