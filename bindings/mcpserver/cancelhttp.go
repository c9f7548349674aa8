package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
)

// cancelFilter keeps a cancelled request of a 2025-11-25 (stateful) HTTP
// session from being answered, as StdioTransport
// does over stdio: MCP says the receiver of notifications/cancelled should not
// respond. The SDK cancels the handler's context (the run stops) but
// still writes its result on the request's SSE stream, and it owns that
// stream; so the filter sits on the HTTP layer: a POST carrying
// notifications/cancelled marks the id, if a POST of the same session
// carrying that request is in flight; the in-flight POST's writer drops
// the SSE event that answers a marked id. Other events (progress) pass.
type cancelFilter struct {
	next    http.Handler
	maxBody int64

	mu       sync.Mutex
	inflight map[string]map[string]bool // session → request id (JSON) → cancelled
}

func newCancelFilter(next http.Handler, maxBody int64) *cancelFilter {
	if maxBody <= 0 {
		maxBody = 4 << 20
	}
	return &cancelFilter{next: next, maxBody: maxBody, inflight: map[string]map[string]bool{}}
}

// rpcPeek is what the filter reads of a JSON-RPC message.
type rpcPeek struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func peekMessages(body []byte) []rpcPeek {
	body = bytes.TrimSpace(body)
	var msgs []rpcPeek
	if len(body) > 0 && body[0] == '[' {
		_ = json.Unmarshal(body, &msgs)
		return msgs
	}
	var m rpcPeek
	if json.Unmarshal(body, &m) == nil {
		msgs = append(msgs, m)
	}
	return msgs
}

// idKey is the comparable form of a JSON-RPC id (7 and 7.0 are one id to
// the SDK; a string stays a string).
func idKey(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return ""
	}
	return idValueKey(v)
}

func (f *cancelFilter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Method != http.MethodPost || sid == "" || r.Body == nil {
		f.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, f.maxBody+1))
	if err != nil || int64(len(body)) > f.maxBody {
		// Too large or unreadable: the SDK answers it (413, 400).
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		f.next.ServeHTTP(w, r)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var ids []string
	f.mu.Lock()
	for _, m := range peekMessages(body) {
		switch {
		case m.Method == "notifications/cancelled":
			if k := idKey(m.Params.RequestID); k != "" {
				if _, ok := f.inflight[sid][k]; ok {
					f.inflight[sid][k] = true
				}
			}
		case m.Method != "" && idKey(m.ID) != "":
			if f.inflight[sid] == nil {
				f.inflight[sid] = map[string]bool{}
			}
			k := idKey(m.ID)
			f.inflight[sid][k] = false
			ids = append(ids, k)
		}
	}
	f.mu.Unlock()
	if len(ids) == 0 {
		f.next.ServeHTTP(w, r)
		return
	}
	fw := &dropWriter{ResponseWriter: w, f: f, sid: sid}
	defer func() {
		fw.finish()
		f.mu.Lock()
		for _, k := range ids {
			delete(f.inflight[sid], k)
		}
		if len(f.inflight[sid]) == 0 {
			delete(f.inflight, sid)
		}
		f.mu.Unlock()
	}()
	f.next.ServeHTTP(fw, r)
}

func (f *cancelFilter) anyCancelled(sid string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.inflight[sid] {
		if c {
			return true
		}
	}
	return false
}

func (f *cancelFilter) cancelled(sid, id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inflight[sid][id]
}

// dropWriter passes an SSE stream through event by event, leaving out the
// events that answer a cancelled request. A body that is not an event
// stream passes untouched.
type dropWriter struct {
	http.ResponseWriter
	f   *cancelFilter
	sid string
	buf []byte
}

func (d *dropWriter) sse() bool {
	return strings.HasPrefix(d.Header().Get("Content-Type"), "text/event-stream")
}

func (d *dropWriter) Write(p []byte) (int, error) {
	if !d.sse() {
		return d.ResponseWriter.Write(p)
	}
	d.buf = append(d.buf, p...)
	for {
		i := bytes.Index(d.buf, []byte("\n\n"))
		if i < 0 {
			return len(p), nil
		}
		ev := d.buf[:i+2]
		if !d.answersCancelled(ev) {
			if _, err := d.ResponseWriter.Write(ev); err != nil {
				return 0, err
			}
		}
		d.buf = d.buf[i+2:]
	}
}

// answersCancelled reports whether the SSE event ev is the response to a
// cancelled request.
func (d *dropWriter) answersCancelled(ev []byte) bool {
	if !d.f.anyCancelled(d.sid) {
		return false // the common case: no JSON decoding of the stream
	}
	for _, line := range bytes.Split(ev, []byte("\n")) {
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		for _, m := range peekMessages(data) {
			if m.Method == "" && (m.Result != nil || m.Error != nil) && d.f.cancelled(d.sid, idKey(m.ID)) {
				return true
			}
		}
	}
	return false
}

func (d *dropWriter) Flush() {
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (d *dropWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// finish writes what is left of an incomplete last event.
func (d *dropWriter) finish() {
	if len(d.buf) > 0 {
		_, _ = d.ResponseWriter.Write(d.buf)
		d.buf = nil
	}
}
