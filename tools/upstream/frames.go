package upstream

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// An answer over the frame cap. The SDK reads a stdio server's messages
// with a cap per frame (mcp.DefaultMaxLineLength, 16 MiB) and, past it,
// fails the connection: the call gets an error that reads like a dead
// server, and every call after it fails until the server is restarted.
// frameFilter, between the server's stdout and the SDK, keeps the
// connection instead: a line over MaxResponseBytes is read to its end and
// dropped, and in its place the SDK gets a JSON-RPC error answering the
// same request id (codeTooLarge), which the call handler turns into a
// non-retryable E_TOOL_FAILED saying how to ask for less. A notification
// or a request from the server over the cap is dropped.

// codeTooLarge is the JSON-RPC error code of an answer frameFilter
// dropped (in the range JSON-RPC leaves to implementations).
const codeTooLarge = -32090

// errTooLargeMessage is the message of that error.
var errTooLargeMessage = fmt.Sprintf("sandcall dropped the answer: it is larger than %d MiB", MaxResponseBytes>>20)

// frameFilter is an io.Reader over a stdio server's stdout that passes
// lines of at most max bytes through and replaces a longer one (see
// above). Lines are newline-delimited JSON-RPC messages; a message that
// spans several short lines (pretty-printed) passes as it is.
type frameFilter struct {
	r    *bufio.Reader
	max  int
	out  []byte // bytes ready for Read
	line []byte // the line being read, while under max
	err  error
}

func newFrameFilter(r io.Reader, max int) *frameFilter {
	return &frameFilter{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

func (f *frameFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.fill()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// fill reads the next line into f.out: the line itself if it is at most
// f.max bytes (with its newline), else the answer that replaces it.
func (f *frameFilter) fill() {
	if cap(f.line) > keptLineBytes {
		f.line = nil // not kept after a very large answer
	}
	f.line = f.line[:0]
	for {
		chunk, err := f.r.ReadSlice('\n')
		if len(f.line)+len(chunk) > f.max {
			f.out = f.drop(chunk)
			return
		}
		if err == nil && len(f.line) == 0 {
			f.out = chunk // a whole line in the buffer: valid until the next fill
			return
		}
		f.line = append(f.line, chunk...)
		switch {
		case err == nil:
			f.out = f.line
			return
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default: // EOF or a read error: what was read goes first
			f.out, f.err = f.line, err
			return
		}
	}
}

// drop reads the rest of an overlong line, keeping only its top-level
// "id" and whether it has a "method", and returns what replaces it.
func (f *frameFilter) drop(chunk []byte) []byte {
	var s idScan
	s.feed(f.line)
	f.line = f.line[:0]
	for {
		s.feed(chunk)
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			break
		}
		var err error
		chunk, err = f.r.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			s.feed(chunk)
			f.err = err
			break
		}
	}
	if s.method || s.bad || len(s.id) == 0 {
		return nil // not an answer to a call of ours: nothing to say
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", json.RawMessage(s.id), jsonrpc.Error{Code: codeTooLarge, Message: errTooLargeMessage}})
	return append(b, '\n')
}

// idScan follows a JSON text as it streams by, without keeping it: the
// value of the top-level object's "id" (a number or a short string), and
// whether it has a "method".
type idScan struct {
	depth      int
	inStr, esc bool
	atKey      bool   // at depth 1, the next string is a key
	inKey      bool   // reading a key at depth 1
	key        []byte // the key read last at depth 1 (capped)
	valueFor   string // at depth 1, the key whose value comes next
	capturing  bool   // reading the id's value
	id         []byte
	method     bool
	bad        bool // the id is not a short number or string
}

// maxIDBytes caps the id kept.
const maxIDBytes = 256

func (s *idScan) feed(b []byte) {
	for _, c := range b {
		if s.inStr {
			switch {
			case s.capturing:
				s.keep(c)
			case s.inKey && len(s.key) < 32:
				s.key = append(s.key, c)
			}
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.inKey {
					s.inKey = false
					s.key = s.key[:len(s.key)-1] // the closing quote
				}
				s.capturing = false
			}
			continue
		}
		if s.capturing { // a number or a literal
			if c == ',' || c == '}' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
				s.capturing = false
			} else {
				s.keep(c)
				continue
			}
		}
		if s.depth == 1 && s.valueFor != "" && c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ':' {
			switch s.valueFor {
			case "id":
				if c == '{' || c == '[' {
					s.bad = true
				} else {
					s.id = s.id[:0]
					s.capturing = true
					s.keep(c)
				}
			case "method":
				s.method = true
			}
			s.valueFor = ""
			if c != '"' && c != '{' && c != '[' {
				continue // a number or a literal: read above
			}
		}
		switch c {
		case '"':
			s.inStr = true
			if s.depth == 1 && s.atKey {
				s.atKey, s.inKey, s.key = false, true, s.key[:0]
			}
		case '{', '[':
			s.depth++
			if s.depth == 1 && c == '{' {
				s.atKey = true
			}
		case '}', ']':
			s.depth--
		case ',':
			if s.depth == 1 {
				s.atKey = true
			}
		case ':':
			if s.depth == 1 {
				s.valueFor = string(s.key)
			}
		}
	}
}

func (s *idScan) keep(c byte) {
	if len(s.id) >= maxIDBytes {
		s.bad = true
		return
	}
	s.id = append(s.id, c)
}

// keptAfterTooLarge reports whether the connection that answered err (a
// tooLarge error) is still usable: frameFilter's answer is, the HTTP
// clients' failures are not.
func keptAfterTooLarge(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code == codeTooLarge
}

// tooLarge reports whether err says an answer was over the cap: the
// error frameFilter put in place of a stdio answer, cappedBody's for an
// HTTP body, or the SDK's for an event of an event stream (its error is
// unexported: matched by its text).
func tooLarge(err error) bool {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && werr.Code == codeTooLarge && werr.Message == errTooLargeMessage {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, ErrResponseTooLarge.Error()) || strings.Contains(msg, "SSE event exceeded")
}

// stdinCloser is a stdio server's stdin. Closing it ends the server as the
// SDK's command transport does: stdin closed, then, if the server has not
// exited within grace, SIGTERM, and SIGKILL after another grace.
type stdinCloser struct {
	io.WriteCloser
	cmd   *exec.Cmd
	grace time.Duration
}

func (s *stdinCloser) Close() error {
	if err := s.WriteCloser.Close(); err != nil {
		return fmt.Errorf("closing stdin: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	wait := func() (error, bool) {
		t := time.NewTimer(s.grace)
		defer t.Stop()
		select {
		case err := <-exited:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if s.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("unresponsive subprocess " + strconv.Itoa(s.cmd.Process.Pid))
}

// keptLineBytes is the most of its line buffer frameFilter keeps between
// lines: answers of a few MiB reuse it rather than grow a new one each.
const keptLineBytes = 4 << 20

// frameBytes is the SDK's own cap on a frame from a stdio server, above
// frameFilter's: a backstop only.
const frameBytes = MaxResponseBytes + 1<<20

// byteReadCloser is the server's stdout for the SDK: closing the
// connection closes stdin (stdinCloser), not stdout, as the SDK's command
// transport does.
type byteReadCloser struct{ io.Reader }

func (byteReadCloser) Close() error { return nil }
