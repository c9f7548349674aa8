package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
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
	// Pins pins tool definitions. If nil, a fresh in-memory set is used:
	// every definition is trusted at first sight again at each start. Use
	// OpenPins to keep them in a file.
	Pins *Pins
	// ReconnectMin and ReconnectMax bound the delay between attempts to
	// connect to a server whose session dropped or whose first connection
	// failed: the delay starts at ReconnectMin (default 250ms), doubles
	// after each failed attempt up to ReconnectMax (default 30s), and each
	// wait is jittered down by up to half.
	ReconnectMin, ReconnectMax time.Duration
	// Background makes Attach return at once: every server is connected,
	// and its tools added to the catalog, in the background as it comes up
	// (the catalog's OnChange tells when), so that a slow or hung server
	// delays nothing. Set.Ready tells when every server's first attempt is
	// over. If false, Attach waits for every first attempt (or ctx).
	Background bool
	// Audit, if set, receives an audit record (event "tool_disabled",
	// with tool, server and reason) each time a tool is disabled because
	// its definition changed since it was approved (a rug pull).
	Audit *slog.Logger
	// Env names variables of sandcall's environment passed on to every
	// stdio server (Server.PassEnv). If nil, none.
	Env []string
	// Want, if set, picks the servers to connect to by name: the others
	// are neither started nor dialled (`sandcall run` starts only those a
	// program names). If nil, every enabled server.
	Want func(server string) bool
	// PinPoll is how often a pin file is checked for changes (an approval
	// by `sandcall tools approve` in another process); when it changed,
	// every server's tools are listed again. If zero, 1s. Pins in memory
	// are not polled.
	PinPoll time.Duration
	// Trust, if set, decides whether a configured server may start: nil
	// if it may, else why not ("never trusted in this project", "start.sh
	// changed"). It is asked before every start of the server,
	// reconnections included, so that what runs is what was trusted; a
	// refused server is skipped with a warning naming what it would run,
	// and its tools are withdrawn. If nil, every server may start.
	Trust func(Entry) error
	// Root is the project root: a server's relative command and cwd are
	// resolved from it. If empty, Config.Root, else the working directory.
	Root string
}

// Set is the connected upstream servers whose tools are in a catalog.
type Set struct {
	cat   *tools.Catalog
	pins  *Pins
	log   *slog.Logger
	audit *slog.Logger // nil: no audit records

	ctx        context.Context // done on Close: stops the supervisors
	cancel     context.CancelFunc
	wg         sync.WaitGroup // supervisors and the pin watcher
	refreshMu  sync.Mutex     // serializes refresh
	minBackoff time.Duration
	maxBackoff time.Duration

	ready chan struct{} // closed when every server's first attempt is over
	trust func(Entry) error
	root  string

	mu       sync.Mutex
	conns    map[string]*Conn             // server name → live connection
	added    map[string]map[string]string // server name → catalog name → definition hash
	disabled map[string]string            // catalog name → server name, for changed definitions
	rank     map[string]int               // server name → precedence in a name clash (lower wins)
	clashes  map[string]Clash             // catalog name → the clash that left a server's tool out
	status   map[string]*serverStatus     // server name → where it stands (status.go)
	warnings []string
	warned   map[string]bool
}

// Warnings returns the problems met so far while loading, connecting,
// listing and reconnecting, each once: each skipped a file, a server or a
// tool, and the rest loaded. It is safe to call while background
// reconnects run.
func (s *Set) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.warnings...)
}

// Attach loads the upstream server configs, connects to every enabled
// server (all at once, each in its own goroutine), and adds their tools to
// cat; with Options.Background it returns before any has answered. A
// server that fails to load, and a
// tool that cannot be added, is skipped with a warning; the others still
// load. Close the Set to stop the servers.
//
// Until Close, each server is supervised: one whose first connection
// failed is retried in the background with exponential backoff (see
// Options.ReconnectMin) and its tools are added when it comes up; on
// notifications/tools/list_changed a server's tools are listed again (see
// Refresh); and when its session drops (a stdio server exits, an HTTP
// session ends) it is reconnected the same way and its tools re-listed.
// During an outage its tools stay in the catalog and fail with a retryable
// E_TOOL_FAILED. With a pin file, an approval written by another process
// is picked up within Options.PinPoll.
func Attach(ctx context.Context, cat *tools.Catalog, opts Options) *Set {
	s := &Set{cat: cat, pins: opts.Pins, log: opts.Logger, audit: opts.Audit,
		conns: map[string]*Conn{}, added: map[string]map[string]string{}, warned: map[string]bool{},
		disabled: map[string]string{}, rank: map[string]int{}, clashes: map[string]Clash{}, status: map[string]*serverStatus{},
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
	for _, w := range cfg.Errors {
		s.warn(w)
	}
	for _, w := range cfg.Warnings {
		s.warn(w)
	}
	s.trust, s.root = opts.Trust, opts.Root
	if s.root == "" {
		s.root = opts.Config.Root
	}
	if s.root == "" {
		s.root = "."
	}
	for i, srv := range cfg.Servers() { // sorted by name: the clash precedence
		s.rank[srv.Name] = i
	}
	// Every server is dialled by its own supervisor under s.ctx, so that
	// Close (on a signal, say) stops a dial in progress and its child.
	s.ready = make(chan struct{})
	var first sync.WaitGroup
	for _, e := range cfg.Entries {
		st := s.classify(e, opts.Want) // status.go
		if st.State != StateStarting {
			continue
		}
		srv := e.Server
		if srv.PassEnv == nil {
			srv.PassEnv = opts.Env
		}
		first.Add(1)
		s.wg.Add(1)
		go s.supervise(newConn(srv), st, first.Done)
	}
	go func() { first.Wait(); close(s.ready) }()
	if !opts.Background {
		select {
		case <-s.ready:
		case <-ctx.Done():
		}
	}
	if s.pins.watched() {
		every := opts.PinPoll
		if every <= 0 {
			every = time.Second
		}
		s.wg.Add(1)
		go s.watchPins(every)
	}
	return s
}

// track makes c the live connection of its server.
func (s *Set) track(c *Conn) {
	s.mu.Lock()
	s.conns[c.Server.Name] = c
	s.mu.Unlock()
}

// Ready is closed when every server's first connection attempt is over:
// it came up and its tools were listed, or it failed (and is retried in
// the background).
func (s *Set) Ready() <-chan struct{} { return s.ready }

// supervise dials c once at once, calling firstDone when that attempt is
// over, then connects c while it is down with backoff, re-lists its tools
// when the server says they changed, and reconnects when its session
// drops, until Close. Before each dial it asks Options.Trust again.
func (s *Set) supervise(c *Conn, st *serverStatus, firstDone func()) {
	defer s.wg.Done()
	defer c.Close()
	c.supervised.Store(true)
	name := c.Server.Name
	up, now := true, false
	if err := c.dial(s.ctx); err != nil {
		if s.ctx.Err() == nil {
			s.warn(fmt.Sprintf("Failed to connect to %q: %v; retrying in the background", name, err))
		}
		s.setState(st, StateFailed, err.Error())
		up = false
	} else {
		s.track(c)
		s.refresh(s.ctx, c)
		s.setState(st, StateUp, "")
	}
	firstDone()
	st.firstDone()
	for {
		if !up {
			if !s.reconnect(c, st, now) {
				return
			}
			s.track(c)
			s.log.Info("upstream: connected", "server", name)
			s.refresh(s.ctx, c)
			s.setState(st, StateUp, "")
		}
		up, now = false, false
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
			case <-c.restart:
				// A call found the session unusable (Conn.redialNow):
				// drop it and dial again at once.
				_ = sess.Close()
				<-done
				now = true
				break serving
			case <-done:
				break serving
			}
		}
		if s.ctx.Err() != nil {
			return
		}
		if now {
			s.log.Info("upstream: session dropped after an answer over the size cap; reconnecting", "server", name)
			continue
		}
		tail := strings.Join(c.StderrTail(), "\n")
		s.setState(st, StateFailed, "the connection was lost; reconnecting")
		s.log.Warn("upstream: connection lost; reconnecting", "server", name, "stderr", tail)
	}
}

// reconnect dials c with jittered exponential backoff until it works
// (true) or the Set is closed (false); the first dial is at once when now.
// A server no longer trusted is not dialled: its tools are withdrawn, and
// trust is asked again at each attempt.
func (s *Set) reconnect(c *Conn, st *serverStatus, now bool) bool {
	delay := s.minBackoff
	for {
		wait := delay/2 + rand.N(delay/2+1)
		if now {
			wait, now = 0, false
		}
		select {
		case <-s.ctx.Done():
			return false
		case <-time.After(wait):
		}
		if err := s.trusted(st); err != nil {
			s.withdraw(c.Server.Name)
			s.setState(st, StateUntrusted, err.Error())
			s.warn(UntrustedMessage(c.Server, err.Error()))
			delay = s.maxBackoff
			continue
		}
		err := c.dial(s.ctx)
		if s.ctx.Err() != nil { // Close raced with the dial
			return false
		}
		if err == nil {
			return true
		}
		s.setState(st, StateFailed, err.Error())
		s.log.Warn("upstream: connection failed", "server", c.Server.Name, "err", err, "retry_in", min(delay*2, s.maxBackoff))
		delay = min(delay*2, s.maxBackoff)
	}
}

// watchPins re-reads the pin file every period and lists every server's
// tools again when a pin changed, so that an approval re-enables its tool
// without a restart.
func (s *Set) watchPins(every time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		changed, err := s.pins.Reload()
		if err != nil {
			s.warn(err.Error())
			continue
		}
		if changed {
			s.log.Info("upstream: pin file changed; listing tools again", "file", s.pins.Path())
			s.Refresh(s.ctx)
		}
	}
}

// warn records msg once (and logs it once).
func (s *Set) warn(msg string) {
	s.mu.Lock()
	seen := s.warned[msg]
	if !seen {
		s.warned[msg] = true
		s.warnings = append(s.warnings, msg)
	}
	s.mu.Unlock()
	if !seen {
		s.log.Warn("upstream: " + msg)
	}
}

// Refresh lists every connected server's tools again: new tools are added,
// vanished ones removed, and a tool whose definition changed since it was
// pinned is removed and reported until it is approved (Pins.Approve,
// Pins.Pin or `sandcall tools approve`). The catalog changes in one step
// per server (tools.Catalog.Replace): a tool that stays is never missing,
// even for a moment.
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
	name := c.Server.Name
	listed, errs, err := c.Tools(ctx)
	if err != nil {
		if s.ctx.Err() == nil { // not Close cutting a re-list short
			s.warn(fmt.Sprintf("server %q: listing tools: %v", name, err))
		}
		return
	}
	for _, e := range errs {
		s.warn(e.Error())
	}
	s.mu.Lock()
	old := s.added[name]
	s.mu.Unlock()
	keep := map[string]string{}
	disabled := map[string]bool{}
	pinKeys := map[string]string{} // catalog name → pin key
	var takeover []Clash           // names this server takes from a server it precedes
	s.mu.Lock()
	for tn, c := range s.clashes { // found again below if they still clash
		if c.Loser == name {
			delete(s.clashes, tn)
		}
	}
	s.mu.Unlock()
	var add []*tools.Tool
	scratch, _ := tools.NewCatalog()
	// One check of the whole list: a first sight of 5,000 tools is one
	// write of the pin file, not 5,000.
	// Pins are keyed by server and tool; a version 1 pin of the catalog
	// name is the legacy pin of each.
	defs := make(map[string]string, len(listed))
	legacy := make(map[string]string, len(listed))
	for _, l := range listed {
		k := PinKey(name, l.Upstream)
		defs[k] = l.Hash
		legacy[k] = l.Tool.Name
	}
	oks, perr := s.pins.CheckMigrating(defs, legacy)
	if perr != nil {
		s.warn(perr.Error())
	}
	for _, l := range listed {
		tn := l.Tool.Name
		pinKeys[tn] = PinKey(name, l.Upstream)
		if !oks[pinKeys[tn]] {
			disabled[tn] = true
			s.warn(fmt.Sprintf("server %q: the definition of tool %q changed since it was approved; it is disabled until approved again (sandcall tools approve %s)", name, tn, tn))
			continue
		}
		if h, had := old[tn]; had && h == l.Hash {
			keep[tn] = h // unchanged: the tool in the catalog stays
			continue
		}
		if err := scratch.Add(l.Tool); err != nil {
			s.warn(fmt.Sprintf("server %q: tool %q: %v", name, l.Upstream, err))
			continue
		}
		if _, had := old[tn]; !had {
			if _, _, taken := s.cat.Resolve(tn); taken { // a tool's name or alias
				other := s.ownerOf(tn)
				if other == "" {
					s.warn(fmt.Sprintf("server %q: tool %q: a tool named %s already exists; skipped", name, l.Upstream, tn))
					continue
				}
				if !s.precedes(name, other) {
					s.clash(Clash{Tool: tn, Winner: other, Loser: name})
					continue
				}
				// This server wins the name whichever came up first.
				takeover = append(takeover, Clash{Tool: tn, Winner: name, Loser: other})
			}
		}
		add = append(add, l.Tool)
		keep[tn] = l.Hash
	}
	var remove []string
	for tn, h := range old {
		if keep[tn] != h {
			remove = append(remove, tn)
		}
	}
	s.mu.Lock()
	for tn, srv := range s.disabled {
		if srv == name && !disabled[tn] {
			delete(s.disabled, tn)
		}
	}
	var newly []string
	for tn := range disabled {
		if _, was := s.disabled[tn]; !was {
			newly = append(newly, tn)
		}
		s.disabled[tn] = name
	}
	s.mu.Unlock()
	if s.audit != nil {
		sort.Strings(newly)
		for _, tn := range newly {
			s.audit.LogAttrs(context.Background(), slog.LevelInfo, "tool_disabled",
				slog.String("tool", tn), slog.String("server", name),
				slog.String("reason", "definition changed since approved"), slog.String("pinned", short(s.pins, pinKeys[tn], tn)),
				slog.String("listed", shortHash(defs[pinKeys[tn]])))
		}
	}
	if len(remove) == 0 && len(add) == 0 {
		return
	}
	taken := slices.Clone(remove)
	for _, c := range takeover {
		taken = append(taken, c.Tool)
	}
	if err := s.cat.Replace(taken, add); err != nil {
		s.warn(fmt.Sprintf("server %q: updating its tools: %v", name, err))
		// Still take out what changed or went away: a changed definition
		// must not stay callable because an addition failed.
		if s.cat.Replace(remove, nil) == nil {
			left := make(map[string]string, len(old))
			for tn, h := range old {
				left[tn] = h
			}
			for _, tn := range remove {
				delete(left, tn)
			}
			s.mu.Lock()
			s.added[name] = left
			s.mu.Unlock()
		}
		return
	}
	s.mu.Lock()
	s.added[name] = keep
	for _, c := range takeover {
		delete(s.added[c.Loser], c.Tool)
	}
	s.mu.Unlock()
	for _, c := range takeover {
		s.clash(c)
	}
}

// Clash is two upstream servers naming a tool the same: the catalog has
// Winner's, Loser's is left out. The winner is the server whose name sorts
// first, whichever came up first (servers attach in the background, in any
// order).
type Clash struct {
	Tool, Winner, Loser string
}

// Clashes returns the tools left out because another server's tool has
// the same catalog name, sorted by name.
func (s *Set) Clashes() []Clash {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Clash, 0, len(s.clashes))
	for _, c := range s.clashes {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}

// clash records c and warns once, in words that do not depend on which
// server came up first.
func (s *Set) clash(c Clash) {
	s.mu.Lock()
	s.clashes[c.Tool] = c
	s.mu.Unlock()
	s.warn(fmt.Sprintf("name clash: servers %q and %q both have a tool named %s; %q's is used (the server whose name sorts first), %q's is left out (rename one of the servers)",
		c.Winner, c.Loser, c.Tool, c.Winner, c.Loser))
}

// ownerOf is the upstream server whose tool has the catalog name tn, or "".
func (s *Set) ownerOf(tn string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for srv, m := range s.added {
		if _, ok := m[tn]; ok {
			return srv
		}
	}
	return ""
}

// precedes reports whether server a wins a name clash with server b.
func (s *Set) precedes(a, b string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ra, oka := s.rank[a]
	rb, okb := s.rank[b]
	if oka && okb && ra != rb {
		return ra < rb
	}
	return a < b
}

// Tools returns the catalog names added for each server.
func (s *Set) Tools() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]string, len(s.added))
	for k, v := range s.added {
		names := make([]string, 0, len(v))
		for n := range v {
			names = append(names, n)
		}
		sort.Strings(names)
		out[k] = names
	}
	return out
}

// Disabled returns the tools left out because their definition changed
// since it was pinned, each with its server's name.
func (s *Set) Disabled() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.disabled))
	for k, v := range s.disabled {
		out[k] = v
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
	var wg sync.WaitGroup
	for _, c := range conns { // in parallel: each may take closeGrace
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	wg.Wait()
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

// short is the first 12 hex digits of the pin of key (else of the legacy
// pin of the catalog name tn), or "".
func short(p *Pins, key, tn string) string {
	h, ok := p.Hash(key)
	if !ok {
		h, _ = p.Hash(tn)
	}
	return shortHash(h)
}

func shortHash(h string) string { return h[:min(12, len(h))] }
