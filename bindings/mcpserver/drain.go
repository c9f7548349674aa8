package mcpserver

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// drainRetryAfter is the Retry-After of a request refused while draining:
// by then a load balancer has usually moved the client to another replica.
const drainRetryAfter = 5 * time.Second

// drainState counts the POSTs in flight and refuses new ones once draining.
type drainState struct {
	mu       sync.Mutex
	draining bool
	active   int
	idle     chan struct{} // closed when draining and active reaches 0
}

// enter admits one request, or reports false when the server is draining.
func (d *drainState) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.active++
	return true
}

func (d *drainState) leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.active--
	if d.draining && d.active == 0 && d.idle != nil {
		close(d.idle)
		d.idle = nil
	}
}

// Drain stops the server taking new work and waits for the work in flight:
// from now on /readyz answers 503 and every new POST to /mcp is refused
// with 503 and Retry-After (a load balancer sends the client elsewhere),
// while the requests already running — programs included — go on. Drain
// returns nil when none is left, or ctx's error when ctx ends first (the
// caller then closes the remaining connections, which cancels their runs:
// E_CANCELLED). Drain is for the HTTP handler; stdio sessions are not
// affected.
func (s *Server) Drain(ctx context.Context) error {
	s.BeginDrain()
	d := &s.drain
	d.mu.Lock()
	if d.active == 0 {
		d.mu.Unlock()
		return nil
	}
	if d.idle == nil {
		d.idle = make(chan struct{})
	}
	idle := d.idle
	d.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// BeginDrain is the first step of Drain, without the wait: from its return
// on, /readyz answers 503 and every new POST to /mcp is refused. Call it
// before announcing the drain, so that nobody told of it can still see
// the server ready; then Drain waits for the work in flight.
func (s *Server) BeginDrain() {
	s.drain.mu.Lock()
	s.drain.draining = true
	s.drain.mu.Unlock()
}

// Draining reports whether BeginDrain (or Drain) was called.
func (s *Server) Draining() bool {
	s.drain.mu.Lock()
	defer s.drain.mu.Unlock()
	return s.drain.draining
}

// refuseDraining writes the 503 of a request that arrives while draining.
func refuseDraining(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(drainRetryAfter/time.Second)))
	http.Error(w, "Service Unavailable: this replica is shutting down; retry (another replica will answer)", http.StatusServiceUnavailable)
}

// healthz answers 200 while the process serves HTTP at all (liveness).
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte("ok\n"))
}

// readyz answers 200 while the server takes new work, 503 once it drains
// (readiness: a load balancer stops sending it requests). The shared store
// is not part of readiness: with Redis down a replica still serves every
// request that needs no shared state, and the others get E_INTERNAL with
// a hint; the body says whether the store answers.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if s.Draining() {
		w.Header().Set("Retry-After", strconv.Itoa(int(drainRetryAfter/time.Second)))
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("draining\n"))
		return
	}
	msg := "ready\n"
	if s.shared != nil {
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		defer cancel()
		if err := s.shared.Ping(ctx); err != nil {
			msg = "ready; shared store unavailable\n"
		} else {
			msg = "ready; shared store ok\n"
		}
	}
	_, _ = w.Write([]byte(msg))
}
