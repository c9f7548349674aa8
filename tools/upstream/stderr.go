package upstream

import (
	"io"
	"strings"
	"sync"

	"github.com/sandcall/sandcall/tools"
)

// Bounds of what is kept of a stdio server's stderr: the last
// stderrKeepBytes, of which the last stderrTailLines lines are quoted in
// its connection errors.
const (
	stderrKeepBytes = 8 << 10
	stderrTailLines = 8
)

// stderrRing keeps the last stderrKeepBytes a stdio server wrote to its
// stderr (npm's 404, a missing directory, a stack trace), so that a
// connection error can say why the server went away instead of "EOF". If
// tee is set, everything is also copied to it as it comes (`sandcall
// servers test --verbose`).
type stderrRing struct {
	tee io.Writer

	mu  sync.Mutex
	buf []byte
}

func (r *stderrRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tee != nil {
		_, _ = r.tee.Write(p)
	}
	r.buf = append(r.buf, p...)
	if n := len(r.buf); n > stderrKeepBytes {
		r.buf = append(r.buf[:0:0], r.buf[n-stderrKeepBytes:]...)
	}
	return len(p), nil
}

// reset forgets what a previous process of the server wrote.
func (r *stderrRing) reset() {
	r.mu.Lock()
	r.buf = nil
	r.mu.Unlock()
}

// tail returns the last non-blank lines kept, at most n, cleaned of
// control characters, with URLs shortened and secret shapes redacted (an
// upstream may print its own token): safe to show and to log.
func (r *stderrRing) tail(n int) []string {
	r.mu.Lock()
	text := string(r.buf)
	r.mu.Unlock()
	var out []string
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		l := strings.TrimSpace(CleanText(lines[i], 512))
		if l == "" {
			continue
		}
		out = append(out, tools.Redact(redactURLs(l)))
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// withStderr adds the last lines of the server's stderr, if any, to a
// connection error.
func (r *stderrRing) withStderr(err error) error {
	if r == nil || err == nil {
		return err
	}
	lines := r.tail(stderrTailLines)
	if len(lines) == 0 {
		return err
	}
	return &stderrError{err: err, lines: lines}
}

// stderrError is a connection error with the last lines the server wrote
// to its stderr.
type stderrError struct {
	err   error
	lines []string
}

func (e *stderrError) Error() string {
	return e.err.Error() + "; the server's stderr ends with:\n    " + strings.Join(e.lines, "\n    ")
}

func (e *stderrError) Unwrap() error { return e.err }

// StderrTail returns the last lines the server's current (or last) process
// wrote to its stderr, cleaned and redacted as in connection errors; none
// for HTTP and SSE servers.
func (c *Conn) StderrTail() []string {
	if c.stderr == nil {
		return nil
	}
	return c.stderr.tail(stderrTailLines)
}
