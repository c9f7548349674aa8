package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

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
}

// Set is the connected upstream servers whose tools are in a catalog.
type Set struct {
	cat  *tools.Catalog
	pins *Pins
	log  *slog.Logger

	mu    sync.Mutex
	conns map[string]*Conn    // server name → connection
	added map[string][]string // server name → catalog names added
	// Warnings are the problems met while loading, connecting and listing:
	// each skipped a file, a server or a tool, and the rest loaded.
	Warnings []string
}

// Attach loads the upstream server configs, connects to every enabled
// server, and adds their tools to cat. A server that fails to load or
// connect, and a tool that cannot be added, is skipped with a warning; the
// others still load. Close the Set to stop the servers.
func Attach(ctx context.Context, cat *tools.Catalog, opts Options) *Set {
	s := &Set{cat: cat, pins: opts.Pins, log: opts.Logger,
		conns: map[string]*Conn{}, added: map[string][]string{}}
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
		}()
	}
	wg.Wait()
	return s
}

func (s *Set) warn(msg string) {
	s.log.Warn("upstream: " + msg)
	s.mu.Lock()
	s.Warnings = append(s.Warnings, msg)
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

// Close closes every connection (stopping stdio servers). Their tools stay
// in the catalog and fail with a retryable E_TOOL_FAILED.
func (s *Set) Close() {
	s.mu.Lock()
	conns := s.conns
	s.conns = map[string]*Conn{}
	s.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}
