package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sandcall/sandcall/tools"
)

// Options configures Attach.
type Options struct {
	// Config says where server definitions are read from.
	Config LoadConfig
	// Logger receives warnings (skipped servers and tools). If nil, they
	// are discarded (they are also in Set.Warnings).
	Logger *slog.Logger
	// Pins pins tool definitions. If nil, a fresh in-memory set is used.
	Pins *Pins
	// ReconnectMin and ReconnectMax bound the delay between attempts to
	// reconnect to a server whose session dropped: the delay starts at
	// ReconnectMin (default 250ms), doubles after each failed attempt up to
	// ReconnectMax (default 30s), and each wait is jittered down by up to
	// half.
	ReconnectMin, ReconnectMax time.Duration
}

// Set is the connected upstream servers whose tools are in a catalog.
type Set struct {
	cat  *tools.Catalog
	pins *Pins
	log  *slog.Logger

	ctx        context.Context // done on Close: stops the supervisors
	cancel     context.CancelFunc
	wg         sync.WaitGroup // supervisors
	refreshMu  sync.Mutex     // serializes refresh
	minBackoff time.Duration
	maxBackoff time.Duration

	mu       sync.Mutex
	conns    map[string]*Conn    // server name → connection
	added    map[string][]string // server name → catalog names added
	warnings []string
}

// Warnings returns the problems met so far while loading, connecting,
// listing and reconnecting: each skipped a file, a server or a tool, and the
// rest loaded. It is safe to call while background reconnects run.
func (s *Set) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.warnings...)
}

// Attach loads the upstream server configs, connects to every enabled
// server, and adds their tools to cat. A server that fails to load or
// connect, and a tool that cannot be added, is skipped with a warning; the
// others still load. Close the Set to stop the servers.
//
// Until Close, each connected server is supervised: on
// notifications/tools/list_changed its tools are listed again (see
// Refresh), and when its session drops (a stdio server exits, an HTTP
// session ends) it is reconnected with exponential backoff and its tools
// re-listed. During the outage its tools stay in the catalog and fail with
// a retryable E_TOOL_FAILED. A server that could not be connected at all
// is not retried.
func Attach(ctx context.Context, cat *tools.Catalog, opts Options) *Set {
	s := &Set{cat: cat, pins: opts.Pins, log: opts.Logger,
		conns: map[string]*Conn{}, added: map[string][]string{},
		minBackoff: opts.ReconnectMin, maxBackoff: opts.ReconnectMax}
	if s.minBackoff <= 0 {
		s.minBackoff = 250 * time.Millisecond
	}
	if s.maxBackoff <= 0 {
		s.maxBackoff = 30 * time.Second
	}
	s.maxBackoff = max(s.maxBackoff, s.minBackoff)
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if s.pins == nil {
		s.pins = &Pins{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	cfg := Load(opts.Config)
	for _, w := range cfg.Warnings {
		s.warn(w)
	}
	var wg sync.WaitGroup
	for _, srv := range cfg.Servers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Connect(ctx, srv)
			if err != nil {
				s.warn(fmt.Sprintf("Failed to connect to %q: %v", srv.Name, err))
				return
			}
			s.mu.Lock()
			s.conns[srv.Name] = c
			s.mu.Unlock()
			s.refresh(ctx, c)
			s.wg.Add(1)
			go s.supervise(c)
		}()
	}
	wg.Wait()
	return s
}

// supervise re-lists c's tools when the server says they changed, and
// reconnects when its session drops, until Close.
func (s *Set) supervise(c *Conn) {
	defer s.wg.Done()
	name := c.Server.Name
	for {
		sess := c.session()
		done := make(chan struct{})
		go func() { _ = sess.Wait(); close(done) }()
	serving:
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-c.listChanged:
				s.refresh(s.ctx, c)
			case <-done:
				break serving
			}
		}
		s.log.Warn("upstream: connection lost; reconnecting", "server", name)
		delay := s.minBackoff
		for {
			wait := delay/2 + rand.N(delay/2+1)
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(wait):
			}
			err := c.dial(s.ctx)
			if err == nil {
				break
			}
			if s.ctx.Err() != nil {
				return
			}
			s.log.Warn("upstream: reconnect failed", "server", name, "err", err, "retry_in", min(delay*2, s.maxBackoff))
			delay = min(delay*2, s.maxBackoff)
		}
		if s.ctx.Err() != nil { // Close raced with the reconnect
			_ = c.Close()
			return
		}
		s.log.Info("upstream: reconnected", "server", name)
		s.refresh(s.ctx, c)
	}
}

func (s *Set) warn(msg string) {
	s.log.Warn("upstream: " + msg)
	s.mu.Lock()
	s.warnings = append(s.warnings, msg)
	s.mu.Unlock()
}

// Refresh lists every connected server's tools again: new tools are added,
// vanished ones removed, and a tool whose definition changed since it was
// pinned is removed and reported until Pins.Approve accepts it.
func (s *Set) Refresh(ctx context.Context) {
	s.mu.Lock()
	conns := make([]*Conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		s.refresh(ctx, c)
	}
}

func (s *Set) refresh(ctx context.Context, c *Conn) {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	listed, errs, err := c.Tools(ctx)
	if err != nil {
		s.warn(fmt.Sprintf("server %q: listing tools: %v", c.Server.Name, err))
		return
	}
	for _, e := range errs {
		s.warn(e.Error())
	}
	s.mu.Lock()
	old := s.added[c.Server.Name]
	s.mu.Unlock()
	for _, n := range old {
		s.cat.Remove(n)
	}
	var names []string
	for _, l := range listed {
		if !s.pins.Check(l.Tool.Name, l.Hash) {
			s.warn(fmt.Sprintf("server %q: the definition of tool %q changed since it was approved; it is disabled until approved again (sandcall tools approve %s)", c.Server.Name, l.Tool.Name, l.Tool.Name))
			continue
		}
		if err := s.cat.Add(l.Tool); err != nil {
			s.warn(fmt.Sprintf("server %q: tool %q: %v", c.Server.Name, l.Upstream, err))
			continue
		}
		names = append(names, l.Tool.Name)
	}
	s.mu.Lock()
	s.added[c.Server.Name] = names
	s.mu.Unlock()
}

// Tools returns the catalog names added for each server.
func (s *Set) Tools() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]string, len(s.added))
	for k, v := range s.added {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// Pins returns the set's pins, for approving changed definitions.
func (s *Set) Pins() *Pins { return s.pins }

// Close stops reconnecting and closes every connection (stopping stdio
// servers). Their tools stay in the catalog and fail with a retryable
// E_TOOL_FAILED.
func (s *Set) Close() {
	s.cancel()
	s.mu.Lock()
	conns := s.conns
	s.conns = map[string]*Conn{}
	s.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
}

// pid is the process id of the named stdio server, or 0.
func (s *Set) pid(server string) int {
	s.mu.Lock()
	c := s.conns[server]
	s.mu.Unlock()
	if c == nil {
		return 0
	}
	return c.pid()
}
