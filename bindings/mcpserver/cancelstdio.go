package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport returns the transport of one session over a byte stream
// (standard input and output): newline-delimited JSON-RPC, lines capped at
// MaxRequestBytes, and a request the client cancelled is not answered
// (stdioCancelFilter).
func (s *Server) StdioTransport(r io.ReadCloser, w io.WriteCloser) mcp.Transport {
	f := &stdioCancelFilter{cancelled: map[string]bool{}}
	return &mcp.IOTransport{Reader: &cancelReader{ReadCloser: r, f: f}, Writer: &cancelWriter{WriteCloser: w, f: f},
		MaxLineLength: int(s.MaxRequestBytes())}
}

// stdioCancelFilter keeps a session over stdio from answering a request
// the client cancelled: the MCP spec says a receiver of notifications/cancelled should
// not respond to the cancelled request, but the SDK writes the handler's
// result (an E_CANCELLED run) anyway. It watches the lines read for
// cancellations and drops the response to a cancelled ID on its way out.
// It works on the byte streams, below mcp.IOTransport, so the SDK's own
// connection (batching rules, negotiated version) is untouched.
type stdioCancelFilter struct {
	mu        sync.Mutex
	cancelled map[string]bool // idKey of cancelled request IDs
}

// maxCancelled bounds the IDs remembered (a cancellation that arrives
// after its response was sent is never matched); past it the set is
// cleared. maxCancelLine: longer lines are not cancellations.
const (
	maxCancelled  = 1024
	maxCancelLine = 4 << 10
)

// idValueKey is the JSON of a request ID's value, so that 2 in a
// notification's params and the ID 2 of a response are the same key.
func idValueKey(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (f *stdioCancelFilter) note(line []byte) {
	if !bytes.Contains(line, []byte("notifications/cancelled")) {
		return
	}
	m, err := jsonrpc.DecodeMessage(line)
	req, ok := m.(*jsonrpc.Request)
	if err != nil || !ok || req.IsCall() || req.Method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.RequestID == nil {
		return
	}
	f.mu.Lock()
	if len(f.cancelled) >= maxCancelled {
		clear(f.cancelled)
	}
	f.cancelled[idValueKey(p.RequestID)] = true
	f.mu.Unlock()
}

// drop reports whether msg (one JSON-RPC message as written) answers a
// cancelled request, and forgets the ID.
func (f *stdioCancelFilter) drop(msg []byte) bool {
	f.mu.Lock()
	none := len(f.cancelled) == 0
	f.mu.Unlock()
	if none {
		return false
	}
	m, err := jsonrpc.DecodeMessage(bytes.TrimSpace(msg))
	resp, ok := m.(*jsonrpc.Response)
	if err != nil || !ok || !resp.ID.IsValid() {
		return false
	}
	k := idValueKey(resp.ID.Raw())
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancelled[k] {
		delete(f.cancelled, k)
		return true
	}
	return false
}

type cancelReader struct {
	io.ReadCloser
	f    *stdioCancelFilter
	line []byte
	over bool // the current line is longer than maxCancelLine
}

func (r *cancelReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	for _, c := range p[:n] {
		if c == '\n' {
			if !r.over {
				r.f.note(r.line)
			}
			r.line, r.over = r.line[:0], false
			continue
		}
		if len(r.line) >= maxCancelLine {
			r.over = true
			continue
		}
		r.line = append(r.line, c)
	}
	return n, err
}

// cancelWriter gets one whole message per Write (mcp.IOTransport writes
// each message, newline included, in one call).
type cancelWriter struct {
	io.WriteCloser
	f *stdioCancelFilter
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	if w.f.drop(p) {
		return len(p), nil
	}
	return w.WriteCloser.Write(p)
}
