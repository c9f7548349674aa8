package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/cli/config"
	"github.com/sandcall/sandcall/store"
)

// rateLimiter is the configured transport rate limit, nil when off. With
// a shared store (store: in sandcall.yaml) the buckets live there, so the
// limit holds across replicas.
func rateLimiter(h config.HTTP, shared store.Store) mcpserver.RateLimiter {
	if h.RateLimit.PerSecond < 0 {
		return nil
	}
	local := mcpserver.NewTokenBucket(h.RateLimit.PerSecond, h.RateLimit.Burst)
	if shared == nil {
		return local
	}
	return &mcpserver.SharedRateLimiter{Store: shared, PerSecond: h.RateLimit.PerSecond, Burst: h.RateLimit.Burst, Local: local}
}

// bodyDeadline reads a request's body within d of the request's start (the
// headers are bounded by ReadHeaderTimeout), so that a body trickled in
// byte by byte does not hold a connection and a goroutine forever. A body
// not complete in time gets 408 and the connection is closed. The body is
// read here, at most limit+1 bytes (the guard refuses a larger one with
// 413), and handed on from memory; requests without a body (GET, DELETE)
// pass untouched, so long-lived event streams keep no read deadline.
func bodyDeadline(next http.Handler, d time.Duration, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(d))
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				w.Header().Set("Connection", "close")
				http.Error(w, fmt.Sprintf("Request Timeout: the body did not arrive within %v", d), http.StatusRequestTimeout)
				return
			}
			w.Header().Set("Connection", "close")
			http.Error(w, "Bad Request: reading the body failed", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// connLimit is a net.Listener that keeps at most n connections open: one
// more is answered 503 with Retry-After and closed at once, so that a flood
// of idle connections cannot exhaust the server.
type connLimit struct {
	net.Listener
	mu   sync.Mutex
	open int
	n    int
}

const busyResponse = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: 59\r\n\r\nService Unavailable: too many open connections; retry soon\n"

func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.open >= l.n {
			l.mu.Unlock()
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = io.WriteString(c, busyResponse)
			c.Close()
			continue
		}
		l.open++
		l.mu.Unlock()
		return &limitedConn{Conn: c, l: l}, nil
	}
}

type limitedConn struct {
	net.Conn
	once sync.Once
	l    *connLimit
}

func (c *limitedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}
