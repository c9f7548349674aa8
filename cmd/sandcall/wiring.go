package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// common holds the flags shared by serve and run.
type common struct {
	demo      bool
	isolation string
	timeout   time.Duration
	logLevel  string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.demo, "demo", false, "enable the embedded demo toolsets (the expense tools and ping)")
	fs.StringVar(&c.isolation, "isolation", "inprocess",
		"isolation tier: inprocess (the only one implemented yet; not a security boundary). "+
			"process (a pool of worker processes, the future default) is not implemented yet and is refused")
	fs.DurationVar(&c.timeout, "timeout", sandbox.DefaultLimits().Timeout,
		fmt.Sprintf("wall-time limit per run: the default and the ceiling of run_code's timeout_ms (at most %s)", sandbox.MaxTimeout))
	fs.StringVar(&c.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
}

// check validates the shared flags; it returns a usage error message.
func (c *common) check() string {
	switch c.isolation {
	case "inprocess":
	case "process":
		return "--isolation process is not implemented yet (it comes with the worker pool); " +
			"use --isolation inprocess, which runs programs inside this process and is not a security boundary"
	default:
		return fmt.Sprintf("unknown --isolation %q: want inprocess (or process, not implemented yet)", c.isolation)
	}
	if c.timeout <= 0 || c.timeout > sandbox.MaxTimeout {
		return fmt.Sprintf("--timeout must be greater than 0 and at most %s", sandbox.MaxTimeout)
	}
	if _, ok := parseLevel(c.logLevel); !ok {
		return fmt.Sprintf("unknown --log-level %q: want debug, info, warn or error", c.logLevel)
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
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl}))
}

// catalogTools returns the tools the flags enable.
func (c *common) catalogTools() []*tools.Tool {
	if !c.demo {
		return nil
	}
	return demo.Tools()
}

// newRunner wires a catalog of ts, a broker with the default policy, and the
// in-process JavaScript engine.
func newRunner(ts []*tools.Tool, timeout time.Duration, log *slog.Logger) (*bindings.Runner, error) {
	cat, err := tools.NewCatalog(ts...)
	if err != nil {
		return nil, err
	}
	broker, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat, Logger: log})
	if err != nil {
		return nil, err
	}
	return bindings.NewRunner(bindings.RunnerConfig{
		Broker:   broker,
		Executor: js.New(js.Config{}),
		Limits:   sandbox.Limits{Timeout: timeout},
	})
}
