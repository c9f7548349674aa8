package mcpserver

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
)

// The transport limits of an HTTP server in front of HTTPHandler, beside
// the ones HTTPHandler applies itself (size, rate): a deadline on request
// bodies and a cap on open connections. `sandcall serve --http` sets both
// from sandcall.yaml's http: section.

// BodyDeadline reads a request's body within d of the request's start (the
// headers are bounded by http.Server.ReadHeaderTimeout), so that a body
// trickled in byte by byte does not hold a connection and a goroutine
// forever. A body not complete in time gets 408, and the connection is
// closed at once, whatever of the body is still due: the read deadline is
// left expired, so Go's server, which reads up to 256 KiB of an unread body
// after the handler to keep the connection, gives up at once instead of
// waiting for bytes that may never come, and closes it (Connection: close).
// The body is read here, at most limit+1 bytes (HTTPHandler refuses a
// larger one with 413), and handed on from memory; requests without a body
// (GET, DELETE) pass untouched, so long-lived event streams keep no read
// deadline.
func BodyDeadline(next http.Handler, d time.Duration, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(d))
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			// The deadline stays in the past: nothing more is read from
			// this connection, and the server closes it after the answer.
			_ = rc.SetReadDeadline(time.Unix(1, 0))
			w.Header().Set("Connection", "close")
			if errors.Is(err, os.ErrDeadlineExceeded) {
				http.Error(w, fmt.Sprintf("Request Timeout: the body did not arrive within %v", d), http.StatusRequestTimeout)
				return
			}
			http.Error(w, "Bad Request: reading the body failed", http.StatusBadRequest)
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// LimitConnections returns a net.Listener that keeps at most n of ln's
// connections open: one more is answered 503 with Retry-After and closed at
// once, so that a flood of idle connections cannot exhaust the server. A
// connection's slot is free before its peer sees it closed.
func LimitConnections(ln net.Listener, n int) net.Listener {
	return &connLimit{Listener: ln, n: n}
}

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
