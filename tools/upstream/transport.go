package upstream

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
)

// MaxResponseBytes caps one HTTP answer of an upstream server that is not
// an event stream, like the SDK caps a stdio frame (mcp.DefaultMaxLineLength):
// the body is read as a stream and cut off past the cap, so a hostile
// server's endless answer costs at most this much memory. Event streams are
// capped per event (mcp.DefaultMaxEventSize), not per stream.
const MaxResponseBytes = 16 << 20

// ErrResponseTooLarge is the read error of an upstream answer over
// MaxResponseBytes.
var ErrResponseTooLarge = fmt.Errorf("the upstream answer is larger than %d MiB", MaxResponseBytes>>20)

// ErrOtherOrigin refuses a request to an origin (scheme, host and port)
// other than the configured URL's: credentials never leave their origin.
var ErrOtherOrigin = errors.New("refused: request to an origin other than the configured url")

// originTransport is the HTTP transport of one upstream server. It sets the
// configured headers only on requests to the configured URL's origin,
// refuses requests to any other origin except a redirect the operator
// allowed with "followRedirects" (which gets no configured header), caps
// answers at MaxResponseBytes, and remembers a 401 or 403 answer, which the
// SDK reports only as text.
//
// The headers are set here, below the http.Client's redirect handling, so
// the check is on every request actually sent: a 307 to another host, or
// an SSE endpoint event naming one, never carries them.
type originTransport struct {
	base    http.RoundTripper
	origin  string // scheme://host:port, lower case, explicit port
	headers map[string]string
	follow  bool         // cross-origin redirects are followed without credentials
	refused atomic.Int32 // the last 401 or 403 status seen
}

func newOriginTransport(base http.RoundTripper, rawURL string, headers map[string]string, follow bool) (*originTransport, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	o, ok := originOf(u)
	if !ok {
		return nil, fmt.Errorf("url %q: want http:// or https:// with a host", rawURL)
	}
	return &originTransport{base: base, origin: o, headers: headers, follow: follow}, nil
}

// client is the http.Client the SDK transport uses: it refuses a redirect to
// another origin unless follow.
func (t *originTransport) client() *http.Client {
	return &http.Client{Transport: t, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if o, _ := originOf(req.URL); o != t.origin && !t.follow {
			return fmt.Errorf("%w: redirect from %s to %s (set \"followRedirects\": true on the server to follow it without credentials)",
				ErrOtherOrigin, t.origin, o)
		}
		return nil
	}}
}

// OriginOf is the origin of u, scheme://host:port in lower case with the
// scheme's default port made explicit; ok is false unless u is an http(s)
// URL with a host. Credentials configured for one origin go to no other:
// package openapi applies the same rule to HTTP APIs.
func OriginOf(u *url.URL) (origin string, ok bool) { return originOf(u) }

// originOf is scheme://host:port of u in lower case, with the scheme's
// default port made explicit.
func originOf(u *url.URL) (string, bool) {
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "http" && scheme != "https") || u.Hostname() == "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}

func (t *originTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	o, _ := originOf(req.URL)
	switch {
	case o == t.origin:
		if len(t.headers) > 0 {
			req = req.Clone(req.Context())
			for k, v := range t.headers {
				req.Header.Set(k, v)
			}
		}
	case req.Response != nil && t.follow:
		// A redirect the operator allowed: sent without credentials.
	default:
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %s %s (configured: %s)", ErrOtherOrigin, req.Method, o, t.origin)
	}
	resp, err := t.base.RoundTrip(traceHeaders(req))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		t.refused.Store(int32(resp.StatusCode))
	}
	if !strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream") {
		resp.Body = &cappedBody{rc: resp.Body, left: MaxResponseBytes}
	}
	return resp, nil
}

// cappedBody fails a read past its cap and closes the connection, so that
// the rest of a hostile answer is never read.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the cap from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			b.rc.Close()
			return 0, ErrResponseTooLarge
		}
		return b.rc.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
