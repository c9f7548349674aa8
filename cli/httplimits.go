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
	"github.com/sandcall/sandcall/store"
)

// Defaults of the HTTP transport's limits (sandcall.yaml "http:").
const (
	defaultBodyTimeout    = 30 * time.Second
	defaultMaxConnections = 256
	defaultRatePerSecond  = 50
	defaultRateBurst      = 200
)

// httpConfig is the "http:" section of sandcall.yaml: the limits of
// `serve --http`.
type httpConfig struct {
	// BodyTimeout bounds the time to receive one request body (a body sent
	// at a byte a second is cut off with 408). If absent, 30s.
	BodyTimeout string `yaml:"body_timeout"`
	// MaxConnections caps open connections; one more is answered 503 and
	// closed. If absent, 256.
	MaxConnections int `yaml:"max_connections"`
	// RateLimit is the transport rate limit per principal: a token bucket
	// of Burst requests refilled at PerSecond; a request over it gets 429
	// with Retry-After. If absent, 50 a second, bursts of 200; PerSecond -1
	// turns it off.
	RateLimit struct {
		PerSecond float64 `yaml:"per_second"`
		Burst     int     `yaml:"burst"`
	} `yaml:"rate_limit"`

	bodyTimeout time.Duration
}

// check validates the section and fills in the defaults.
func (h *httpConfig) check() error {
	h.bodyTimeout = defaultBodyTimeout
	if h.BodyTimeout != "" {
		d, err := time.ParseDuration(h.BodyTimeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("http.body_timeout: want a duration such as 30s, got %q", h.BodyTimeout)
		}
		h.bodyTimeout = d
	}
	if h.MaxConnections < 0 || h.RateLimit.Burst < 0 || (h.RateLimit.PerSecond < 0 && h.RateLimit.PerSecond != -1) {
		return errors.New("http: max_connections and rate_limit.burst must not be negative; rate_limit.per_second is positive, or -1 for no limit")
	}
	if h.MaxConnections == 0 {
		h.MaxConnections = defaultMaxConnections
	}
	if h.RateLimit.PerSecond == 0 {
		h.RateLimit.PerSecond = defaultRatePerSecond
	}
	if h.RateLimit.Burst == 0 {
		h.RateLimit.Burst = defaultRateBurst
	}
	return nil
}

// rateLimiter is the configured transport rate limit, nil when off. With
// a shared store (store: in sandcall.yaml) the buckets live there, so the
// limit holds across replicas.
func (h *httpConfig) rateLimiter(shared store.Store) mcpserver.RateLimiter {
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
