package upstream

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// State is where a configured server stands in a Set.
type State string

// The states of a configured server.
const (
	// StateStarting: its first connection is under way.
	StateStarting State = "starting"
	// StateUp: connected; its tools are in the catalog.
	StateUp State = "up"
	// StateFailed: its last connection attempt failed, or its session
	// dropped; it is retried in the background.
	StateFailed State = "failed"
	// StateUntrusted: Options.Trust refused it; it was not started.
	StateUntrusted State = "untrusted"
	// StateDisabled: its definition says "enabled": false.
	StateDisabled State = "disabled"
	// StateInvalid: its definition is invalid.
	StateInvalid State = "invalid"
	// StateSelf: it runs sandcall itself (IsSelf); never started.
	StateSelf State = "self"
	// StateNotStarted: Options.Want left it out (`sandcall run` starts
	// only the servers its program names).
	StateNotStarted State = "not started"
)

// Status is where one configured server stands.
type Status struct {
	Server string
	Source string // the config file that defines it
	State  State
	// Cause says why a server is not up: the connection error (with the
	// end of its stderr), why it is not trusted, what is invalid.
	Cause string
	// Timeout bounds its start (its "timeout", else DefaultTimeout).
	Timeout time.Duration
}

// Line is the status in one line, for a person or a model.
func (st Status) Line() string {
	cause := strings.Join(strings.Fields(st.Cause), " ")
	switch st.State {
	case StateUp:
		return fmt.Sprintf("server %q is up", st.Server)
	case StateStarting:
		return fmt.Sprintf("server %q (%s) is still starting (up to %s); its tools appear when it is up", st.Server, st.Source, st.Timeout)
	case StateFailed:
		return fmt.Sprintf("server %q (%s) failed to start: %s; it is retried in the background", st.Server, st.Source, cause)
	case StateUntrusted:
		return fmt.Sprintf("server %q (%s) is not trusted (%s), so it was not started", st.Server, st.Source, cause)
	case StateDisabled:
		return fmt.Sprintf("server %q is disabled (\"enabled\": false in %s)", st.Server, st.Source)
	case StateInvalid:
		return fmt.Sprintf("server %q (%s) is invalid: %s", st.Server, st.Source, cause)
	case StateSelf:
		return fmt.Sprintf("server %q (%s) is sandcall itself and is never started: programs already call this sandcall's tools", st.Server, st.Source)
	case StateNotStarted:
		return fmt.Sprintf("server %q was not started: %s", st.Server, cause)
	}
	return fmt.Sprintf("server %q: %s", st.Server, st.State)
}

// serverStatus is a Status kept by a Set, with the end of the server's
// first attempt.
type serverStatus struct {
	Status
	entry Entry
	first chan struct{} // closed when the first attempt is over
	once  sync.Once
}

func (st *serverStatus) firstDone() { st.once.Do(func() { close(st.first) }) }

// classify records where the configured server of e stands before any
// attempt: StateStarting for one to start.
func (s *Set) classify(e Entry, want func(string) bool) *serverStatus {
	st := &serverStatus{Status: Status{Server: e.Name, Source: e.Source, Timeout: DefaultTimeout}, entry: e, first: make(chan struct{})}
	if e.Server != nil {
		st.Timeout = e.Server.Timeout
	}
	wanted := want == nil || want(e.Name)
	switch {
	case e.Err != nil:
		st.State, st.Cause = StateInvalid, e.Err.Error()
	case !e.Enabled:
		st.State = StateDisabled
	case IsSelf(e.Server, "", s.root):
		st.State = StateSelf
		// An entry that runs sandcall with --mcp-config is the
		// recommended layout (the client starts sandcall, which reads its
		// own file): nothing to warn about.
		if wanted && len(SelfMCPConfigs(e.Server, s.root)) == 0 {
			s.warn(fmt.Sprintf("server %q (%s) is sandcall itself; skipped: list sandcall's upstreams in a file only sandcall reads (serve --mcp-config FILE) or leave sandcall out of the file it reads", e.Name, e.Source))
		}
	case !wanted:
		st.State, st.Cause = StateNotStarted, fmt.Sprintf("the program does not name it (sandcall run starts only the servers whose prefix, %s, appears in the program)", ToolPrefix(e.Name))
	default:
		st.State = StateStarting
		if err := s.trusted(st); err != nil {
			st.State, st.Cause = StateUntrusted, err.Error()
			s.warn(UntrustedMessage(e.Server, err.Error()))
		}
	}
	if st.State != StateStarting {
		st.firstDone()
	}
	s.mu.Lock()
	s.status[e.Name] = st
	s.mu.Unlock()
	return st
}

// trusted asks Options.Trust about st's server.
func (s *Set) trusted(st *serverStatus) error {
	if s.trust == nil {
		return nil
	}
	return s.trust(st.entry)
}

func (s *Set) setState(st *serverStatus, state State, cause string) {
	s.mu.Lock()
	st.State, st.Cause = state, cause
	s.mu.Unlock()
}

// withdraw takes a server's tools out of the catalog.
func (s *Set) withdraw(server string) {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	s.mu.Lock()
	names := make([]string, 0, len(s.added[server]))
	for tn := range s.added[server] {
		names = append(names, tn)
	}
	s.mu.Unlock()
	if len(names) == 0 || s.cat.Replace(names, nil) != nil {
		return
	}
	s.mu.Lock()
	delete(s.added, server)
	s.mu.Unlock()
}

// Statuses returns where every configured server stands, sorted by name.
func (s *Set) Statuses() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Status, 0, len(s.status))
	for _, st := range s.status {
		out = append(out, st.Status)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return out
}

// ServerOf returns the configured server whose tools a catalog name
// belongs to (the longest <server>_ prefix of name), whatever its state.
func (s *Set) ServerOf(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	best, bestLen := "", 0
	for srv := range s.status {
		p := ToolPrefix(srv)
		if len(name) > len(p) && strings.HasPrefix(name, p) && len(p) > bestLen {
			best, bestLen = srv, len(p)
		}
	}
	return best, best != ""
}

// Status returns where the named server stands.
func (s *Set) Status(server string) (Status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.status[server]
	if !ok {
		return Status{}, false
	}
	return st.Status, true
}

// Wait waits until the named server's first attempt is over (or ctx
// ends) and returns where it stands; it returns at once for a server not
// starting. The first attempt is itself bounded by the server's timeout.
func (s *Set) Wait(ctx context.Context, server string) (Status, bool) {
	s.mu.Lock()
	st, ok := s.status[server]
	s.mu.Unlock()
	if !ok {
		return Status{}, false
	}
	select {
	case <-st.first:
	case <-ctx.Done():
	}
	return s.Status(server)
}
