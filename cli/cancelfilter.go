package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// cancelFilter keeps serve over stdio from answering a request the client
// cancelled: the MCP spec says a receiver of notifications/cancelled should
// not respond to the cancelled request, but the SDK writes the handler's
// result (an E_CANCELLED run) anyway. It watches the lines read for
// cancellations and drops the response to a cancelled ID on its way out.
// It works on the byte streams, below mcp.IOTransport, so the SDK's own
// connection (batching rules, negotiated version) is untouched.
type cancelFilter struct {
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

func newCancelFilter() *cancelFilter { return &cancelFilter{cancelled: map[string]bool{}} }

// idKey is the JSON of a request ID's value, so that 2 in a notification's
// params and the ID 2 of a response are the same key.
func idKey(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (f *cancelFilter) note(line []byte) {
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
	f.cancelled[idKey(p.RequestID)] = true
	f.mu.Unlock()
}

// drop reports whether msg (one JSON-RPC message as written) answers a
// cancelled request, and forgets the ID.
func (f *cancelFilter) drop(msg []byte) bool {
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
	k := idKey(resp.ID.Raw())
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancelled[k] {
		delete(f.cancelled, k)
		return true
	}
	return false
}

func (f *cancelFilter) reader(r io.ReadCloser) io.ReadCloser {
	return &cancelReader{ReadCloser: r, f: f}
}

func (f *cancelFilter) writer(w io.WriteCloser) io.WriteCloser {
	return &cancelWriter{WriteCloser: w, f: f}
}

type cancelReader struct {
	io.ReadCloser
	f    *cancelFilter
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
	f *cancelFilter
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	if w.f.drop(p) {
		return len(p), nil
	}
	return w.WriteCloser.Write(p)
}
