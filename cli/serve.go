package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/cli/config"
)

const serveExamples = `  # stdio (the default): point an MCP client at this command
  sandcall serve --demo

  # streamable HTTP on a free loopback port; the URL is printed to stderr
  sandcall serve --demo --http 127.0.0.1:0

  # HTTP on all interfaces: needs --allow-remote and bearer tokens in sandcall.yaml
  # (auth.tokens; hash each token with 'sandcall token hash')
  sandcall serve --config sandcall.yaml --http 0.0.0.0:8080 --allow-remote

  # audit records (JSON Lines) to a file; Prometheus metrics at /metrics over HTTP
  sandcall serve --demo --http 127.0.0.1:8080 --audit audit.jsonl
`

func cmdServe(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "serve", "[--http ADDR [--allow-remote]] [--demo] [--isolation inprocess] [--timeout D] [--log-level L]", serveExamples)
	var c common
	c.register(fs)
	addr := fs.String("http", "", "serve streamable HTTP at ADDR (host:port, port 0 picks a free one) under /mcp, instead of stdio")
	remote := fs.Bool("allow-remote", false, "allow --http on a non-loopback address; requires bearer tokens (auth.tokens in the config file)")
	hf := registerHostedFlags(fs)
	otlp := registerTracing(fs)
	drain := fs.Duration("drain-timeout", 30*time.Second, "on SIGTERM over HTTP, how long running programs may take to finish while new requests get 503 + Retry-After")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErr(e, fs, "unexpected argument %q", pos[0])
	}
	if msg := c.loadConfig(fs); msg != "" {
		fmt.Fprintf(e.stderr, "sandcall serve: %s\n", msg)
		return exitUsage
	}
	if msg := c.check(); msg != "" {
		return usageErr(e, fs, "%s", msg)
	}
	if *remote && *addr == "" {
		return usageErr(e, fs, "--allow-remote needs --http")
	}
	if *addr == "" && hf.set() {
		return usageErr(e, fs, "--public-url and --auth-* need --http (stdio has no bearer tokens)")
	}
	log := c.logger(e.stderr)
	tp, stopTracing, err := setupTracing(ctx, e.stderr, c.cfg.Tracing, *otlp, log)
	if err != nil {
		return usageErr(e, fs, "%v", err)
	}
	defer stopTracing()
	c.tracer = tp
	if *addr != "" {
		c.metrics = mcpserver.NewMetrics()
	}
	runner, closeRunner, err := newRunner(c.catalogTools(), &c, log)
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall serve: %v\n", err)
		return exitFailure
	}
	defer closeRunner()
	scfg := mcpserver.Config{Runner: runner, Version: version, Logger: log, Principal: principalOf(c.cfg),
		ListThreshold: c.cfg.ListThreshold, Store: c.shared, MaxRequestStateBytes: c.cfg.Limits.MaxRequestStateBytes}
	if *addr != "" {
		scfg.Tokens = tokensOf(c.cfg)
		if scfg.Hosted, err = hf.hosted(c.cfg, *addr); err != nil {
			return usageErr(e, fs, "%v", err)
		}
		scfg.Metrics = c.metrics
		scfg.RateLimit = rateLimiter(c.cfg.HTTP, c.shared, len(scfg.Tokens) > 0 || scfg.Hosted.JWT != nil)
	}
	srv, err := mcpserver.New(scfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "sandcall serve: %v\n", err)
		return exitFailure
	}
	if tp != nil {
		srv.MCP().AddReceivingMiddleware(mcpserver.TraceMiddleware(tp, nil))
	}
	srv.MCP().AddReceivingMiddleware(c.waitForSources(runner.Broker().Catalog(), srv.Refresh))
	// A reloaded .agents/tools script, a changed upstream tool list or a
	// reloaded policy reaches connected clients as
	// notifications/tools/list_changed.
	broker := runner.Broker()
	stopRefresh := refreshOnChange(func(f func()) { broker.Catalog().OnChange(f); broker.OnAuthorizerChange(f) },
		srv.Refresh, refreshDebounce, log)
	defer stopRefresh()
	// An upstream that attached between New's first sync and the
	// subscription above changed the catalog unseen: sync once more.
	if err := srv.Refresh(); err != nil {
		log.Warn("refreshing the tool list", "err", err)
	}
	go releaseWhenIdle(ctx)
	if *addr != "" {
		return serveHTTP(ctx, e, fs.Name(), srv, *addr, *remote, len(scfg.Tokens)+hostedNote(e, scfg.Hosted), &c.cfg.HTTP, *drain, log)
	}
	return serveStdio(ctx, e, srv)
}

// serveStdio serves one session on stdin/stdout. Before the session starts,
// file descriptor 1 is pointed at stderr and the protocol keeps a private
// duplicate of the real stdout, so that no stray write to stdout (a library's
// print, a debugging line) can corrupt the JSON-RPC stream.
func serveStdio(ctx context.Context, e *env, srv *mcpserver.Server) int {
	var t mcp.Transport
	if e.stdout == os.Stdout {
		out, err := takeStdout()
		if err != nil {
			fmt.Fprintf(e.stderr, "sandcall serve: %v\n", err)
			return exitFailure
		}
		t = srv.StdioTransport(os.Stdin, out)
	} else {
		t = srv.StdioTransport(io.NopCloser(e.stdin), nopWriteCloser{e.stdout})
	}
	err := srv.Run(ctx, t)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		fmt.Fprintf(e.stderr, "sandcall serve: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// refreshDebounce coalesces bursts of catalog changes (a directory re-read,
// an upstream re-list) into one Refresh.
const refreshDebounce = 100 * time.Millisecond

// refreshOnChange calls refresh (the MCP server's Refresh) once what
// subscribe watches has stopped changing for d. subscribe registers its
// argument with every change source (the catalog's OnChange, the broker's
// OnAuthorizerChange). stop cancels a pending call; later changes are
// ignored.
func refreshOnChange(subscribe func(func()), refresh func() error, d time.Duration, log *slog.Logger) (stop func()) {
	var (
		mu      sync.Mutex
		timer   *time.Timer
		stopped bool
	)
	subscribe(func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		if timer != nil {
			timer.Reset(d)
			return
		}
		timer = time.AfterFunc(d, func() {
			mu.Lock()
			done := stopped
			mu.Unlock()
			if done {
				return
			}
			if err := refresh(); err != nil {
				log.Warn("refreshing the tool list", "err", err)
			}
		})
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		if timer != nil {
			timer.Stop()
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveHTTP serves streamable HTTP at addr until ctx is done.
func serveHTTP(ctx context.Context, e *env, name string, srv *mcpserver.Server, addr string, remote bool, tokens int, lim *config.HTTP, drain time.Duration, log interface {
	Warn(string, ...any)
}) int {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: --http %q: want host:port\n", name, addr)
		return exitUsage
	}
	if !isLoopbackHost(host) {
		if !remote {
			fmt.Fprintf(e.stderr, "%s: --http %q is not a loopback address; sandcall serves only 127.0.0.1, ::1 or localhost "+
				"unless you pass --allow-remote (with bearer tokens configured)\n", name, addr)
			return exitUsage
		}
		if tokens == 0 {
			fmt.Fprintf(e.stderr, "%s: --allow-remote needs bearer tokens: list them under auth.tokens in the config file "+
				"(hash each with 'sandcall token hash')\n", name)
			return exitUsage
		}
	}
	if tokens == 0 {
		fmt.Fprintf(e.stderr, "warning: HTTP without authentication (no auth.tokens configured): any local process can run programs and call tools; serving on loopback only\n")
	} else {
		fmt.Fprintf(e.stderr, "bearer-token authentication on; /metrics needs a token too\n")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
		return exitFailure
	}
	if srv.PublicURLNeeded() && isLoopbackHost(host) {
		_ = srv.SetPublicURL("http://" + ln.Addr().String()) // the JWT audience on loopback
	}
	ln = mcpserver.LimitConnections(ln, lim.MaxConnections)
	hs := &http.Server{
		Handler:           mcpserver.BodyDeadline(srv.HTTPHandler(), lim.BodyTimeoutDuration(), srv.MaxRequestBytes()),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	fmt.Fprintf(e.stderr, "listening on http://%s%s\n", ln.Addr().String(), mcpserver.HTTPPath)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
		return exitFailure
	case <-ctx.Done():
	}
	// Drain: /readyz turns 503 and new requests get 503 + Retry-After
	// while running programs finish, up to the drain timeout; then the
	// connections left (idle session streams, runs over the deadline,
	// which end E_CANCELLED) are closed. Readiness turns first, then the
	// drain is announced: whoever reads the line sees the replica unready.
	srv.BeginDrain()
	fmt.Fprintf(e.stderr, "draining: refusing new requests, waiting up to %s for running ones\n", drain)
	dctx, dcancel := context.WithTimeout(context.Background(), drain)
	defer dcancel()
	if err := srv.Drain(dctx); err != nil {
		log.Warn("drain: deadline reached with requests still running; closing them", "timeout", drain.String())
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("shutdown: closing open connections", "err", err)
		hs.Close()
	}
	return exitOK
}

// isLoopbackHost reports whether host (from host:port) can only be reached
// from this machine.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}
