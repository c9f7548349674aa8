package mcpserver

import (
	"bytes"
	"container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox"
)

// ReadOutputName is the name of the MCP tool that pages through a run_code
// result or logs that were cut (see sandbox.Result.OutputRef and LogsRef).
const ReadOutputName = "read_output"

// Defaults of the output store (Config.MaxOutputs, MaxOutputBytes,
// OutputTTL) and read_output's page size.
const (
	DefaultMaxOutputs     = 64
	DefaultMaxOutputBytes = 64 << 20
	DefaultOutputTTL      = 10 * time.Minute
	defaultPageBytes      = 64 << 10
)

// outputStore keeps whole results that were cut, for read_output. It is
// bounded in count and bytes (the least recently read output of the
// principal holding the most bytes goes first),
// every output expires a fixed time after it was stored, and each is bound
// to the principal of the run: a ref is 128 random bits, and another
// principal's ref is as unknown as a made-up one. Safe for concurrent use.
type outputStore struct {
	maxCount int
	maxBytes int64
	ttl      time.Duration
	now      func() time.Time

	mu     sync.Mutex // guards the fields below
	byRef  map[string]*list.Element
	lru    *list.List // of *storedOutput, most recently used at the front
	bytes  int64
	byUser map[string]holding // what each principal holds
}

// holding is what one principal holds in an outputStore.
type holding struct {
	count int
	bytes int64
}

type storedOutput struct {
	ref       string
	principal string
	data      []byte
	expires   time.Time
	meta      map[string]any // the run's label, for each page's _meta (outputs_meta.go)
}

// newOutputStore returns a store; zero arguments take the defaults and a nil
// clock is time.Now.
func newOutputStore(maxCount int, maxBytes int64, ttl time.Duration, now func() time.Time) *outputStore {
	if maxCount <= 0 {
		maxCount = DefaultMaxOutputs
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxOutputBytes
	}
	if ttl <= 0 {
		ttl = DefaultOutputTTL
	}
	if now == nil {
		now = time.Now
	}
	return &outputStore{maxCount: maxCount, maxBytes: maxBytes, ttl: ttl, now: now,
		byRef: make(map[string]*list.Element), lru: list.New(), byUser: make(map[string]holding)}
}

// put keeps data for principal and returns its ref; ok is false when data
// alone is over the store's byte bound (nothing is kept then). Older
// outputs are evicted to make room.
func (s *outputStore) put(principal string, data []byte) (ref string, ok bool) {
	if int64(len(data)) > s.maxBytes {
		return "", false
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	ref = "out_" + hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	for s.lru.Len() > 0 && (s.lru.Len() >= s.maxCount || s.bytes+int64(len(data)) > s.maxBytes) {
		s.removeLocked(s.victimLocked(principal, int64(len(data))))
	}
	o := &storedOutput{ref: ref, principal: principal, data: data, expires: s.now().Add(s.ttl)}
	s.byRef[ref] = s.lru.PushFront(o)
	s.bytes += int64(len(data))
	h := s.byUser[principal]
	s.byUser[principal] = holding{h.count + 1, h.bytes + int64(len(data))}
	return ref, true
}

// victimLocked picks the output to evict so that principal can store n
// more bytes: the least recently used output of whoever would then hold the
// largest share of the store (of its count or of its bytes, whichever is
// larger), so that one principal's flood evicts its own outputs before
// another principal's. With one principal it is plain LRU.
func (s *outputStore) victimLocked(principal string, n int64) *list.Element {
	heaviest, most := "", -1.0
	for p, h := range s.byUser {
		if p == principal {
			h.count, h.bytes = h.count+1, h.bytes+n
		}
		share := max(float64(h.count)/float64(s.maxCount), float64(h.bytes)/float64(s.maxBytes))
		if share > most || share == most && p < heaviest {
			heaviest, most = p, share
		}
	}
	for e := s.lru.Back(); e != nil; e = e.Prev() {
		if e.Value.(*storedOutput).principal == heaviest {
			return e
		}
	}
	return s.lru.Back()
}

// get returns the output under ref if it is principal's and has not
// expired.
func (s *outputStore) get(principal, ref string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	e, ok := s.byRef[ref]
	if !ok {
		return nil, false
	}
	o := e.Value.(*storedOutput)
	if o.principal != principal {
		return nil, false
	}
	s.lru.MoveToFront(e)
	return o.data, true
}

// stats returns the number of outputs kept and their bytes.
func (s *outputStore) stats() (int, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	return s.lru.Len(), s.bytes
}

func (s *outputStore) expireLocked() {
	now := s.now()
	for e := s.lru.Front(); e != nil; {
		next := e.Next()
		if !now.Before(e.Value.(*storedOutput).expires) {
			s.removeLocked(e)
		}
		e = next
	}
}

func (s *outputStore) removeLocked(e *list.Element) {
	o := s.lru.Remove(e).(*storedOutput)
	delete(s.byRef, o.ref)
	s.bytes -= int64(len(o.data))
	if h := s.byUser[o.principal]; h.count <= 1 {
		delete(s.byUser, o.principal)
	} else {
		s.byUser[o.principal] = holding{h.count - 1, h.bytes - int64(len(o.data))}
	}
}

// readOutputArgs are the arguments of read_output.
type readOutputArgs struct {
	Ref    string   `json:"ref"`
	Offset *float64 `json:"offset"`
	Limit  *float64 `json:"limit"`
}

// readOutputPage is read_output's structured output.
type readOutputPage struct {
	Ref        string `json:"ref"`
	Offset     int    `json:"offset"`
	Data       string `json:"data"`
	NextOffset int    `json:"next_offset"`
	TotalBytes int    `json:"total_bytes"`
	EOF        bool   `json:"eof"`
}

// maxPageBytes is the largest page read_output returns: the result budget.
func (s *Server) maxPageBytes() int { return s.runner.Limits().MaxResultBytes }

// readOutputTool builds read_output's definition.
func (s *Server) readOutputTool() toolDef {
	maxPage := float64(s.maxPageBytes())
	zero, one := 0.0, 1.0
	integer := func(d string) *jsonschema.Schema { return &jsonschema.Schema{Type: "integer", Description: d} }
	in := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"ref": {Type: "string", Pattern: "^out_[0-9a-f]{32}$", Description: "The output_ref (or logs_ref) of a run_code result."},
			"offset": {Type: "integer", Minimum: &zero, Default: json.RawMessage("0"),
				Description: "Byte offset into the text: output_next_offset (or logs_next_offset) from run_code, then next_offset from the previous page."},
			"limit": {Type: "integer", Minimum: &one, Maximum: &maxPage, Default: json.RawMessage(fmt.Sprint(min(defaultPageBytes, int(maxPage)))),
				Description: fmt.Sprintf("Most bytes to return; default %d, maximum %d.", min(defaultPageBytes, int(maxPage)), int(maxPage))},
		},
		Required:             []string{"ref"},
		PropertyOrder:        []string{"ref", "offset", "limit"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	out := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"ref":         {Type: "string", Description: "The ref read."},
			"offset":      integer("Where this page starts (a byte offset into the text)."),
			"data":        {Type: "string", Description: "The page: bytes offset to next_offset of the text (the result's JSON, or the logs)."},
			"next_offset": integer("Where the next page starts; pass it as offset."),
			"total_bytes": integer("Size of the whole text."),
			"eof":         {Type: "boolean", Description: "True when this page reaches the end."},
		},
		PropertyOrder: []string{"ref", "offset", "data", "next_offset", "total_bytes", "eof"},
		Required:      []string{"ref", "offset", "data", "next_offset", "total_bytes", "eof"},
	}
	ttl := s.outputs.ttl.Round(time.Second).String()
	if m := s.outputs.ttl.Round(time.Second); m%time.Minute == 0 {
		ttl = fmt.Sprintf("%d minutes", int(m/time.Minute))
	}
	desc := "Read more of a run_code result that was cut. When a program returns more than the result budget " +
		fmt.Sprintf("(%d KiB), run_code answers with truncated: true, the first page of the result's compact JSON text "+
			"as a string in result, output_ref, output_bytes (the whole size) and output_next_offset. ", s.maxPageBytes()>>10) +
		"This tool returns the following pages: call it with ref = output_ref and offset = output_next_offset, then with " +
		"offset = next_offset, until eof is true. run_code's page followed by every data, concatenated, is exactly the " +
		"result's JSON text. Offsets count bytes of UTF-8. A ref expires " + ttl + " after the run, and only the same " +
		"principal can read it.\n\n" +
		"Logs work the same way: when the console output was over its budget, logs shows what fit, and logs_ref with " +
		"logs_next_offset leads to the rest (the whole output as text, one entry per line).\n\n" +
		"Do not use it to run code, nor for output you do not need. " +
		"Often better than paging: run a program that returns only what you need (filter, aggregate, summarize).\n\n" +
		`Example: {"ref": "out_5f2a0c9e8b7d41e3a6c0f1d2e3b4a596", "offset": 262144, "limit": 65536} → ` +
		`{"ref": "out_5f2a…", "offset": 262144, "data": "…", "next_offset": 327680, "total_bytes": 400000, "eof": false}`
	return toolDef{
		tool: &mcp.Tool{
			Name:         ReadOutputName,
			Title:        "Read output",
			Description:  desc,
			InputSchema:  in,
			OutputSchema: out,
			Annotations:  &mcp.ToolAnnotations{Title: "Read output", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
		},
		handler: s.handleReadOutput,
	}
}

// handleReadOutput is read_output's handler.
func (s *Server) handleReadOutput(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	bad := func(path, msg, hint string) (*mcp.CallToolResult, error) {
		return errorResult(&sandbox.Error{Code: sandbox.EToolArgs, Tool: ReadOutputName, Path: path, Message: msg, Hint: hint}), nil
	}
	raw := bytes.TrimSpace(req.Params.Arguments)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	var a readOutputArgs
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return bad("/"+ute.Field, fmt.Sprintf("argument %s has the wrong type (%s)", ute.Field, ute.Value), "See read_output's input schema.")
		}
		return bad("", "arguments must be an object with ref, offset and limit", "Use only ref, offset and limit.")
	}
	if a.Ref == "" {
		return bad("/ref", "ref is required", "Pass the output_ref of a run_code result.")
	}
	maxPage := s.maxPageBytes()
	offset, limit := 0, min(defaultPageBytes, maxPage)
	if a.Offset != nil {
		v := *a.Offset
		if v != float64(int64(v)) || v < 0 || v > float64(sandbox.MaxKeptResultBytes) {
			return bad("/offset", "offset must be a non-negative integer", "Pass output_next_offset from run_code, or next_offset from the previous page.")
		}
		offset = int(v)
	}
	if a.Limit != nil {
		v := *a.Limit
		if v != float64(int64(v)) || v < 1 || v > float64(maxPage) {
			return bad("/limit", fmt.Sprintf("limit must be an integer from 1 to %d", maxPage), "Omit limit for the default page size.")
		}
		limit = int(v)
	}
	data, meta, ok, err := s.loadOutput(ctx, s.principalFor(req).ID, a.Ref)
	if err != nil {
		s.log.Warn("mcpserver: read_output: shared store unavailable", "err", err)
		return errorResult(storeUnavailable(ReadOutputName)), nil
	}
	if !ok {
		return bad("/ref", "no output is kept under this ref: it expired, was evicted to make room, or was never issued to you",
			"Run the program again for a new output_ref, and read it soon; or return less from the program so nothing is cut.")
	}
	if offset > len(data) {
		return bad("/offset", fmt.Sprintf("offset %d is past the end of the output (%d bytes)", offset, len(data)),
			"Pass next_offset from the previous page; the output ends at total_bytes.")
	}
	page := pageOf(data, offset, limit)
	page.Ref = a.Ref
	b, err := marshalText(page)
	if err != nil {
		return errorResult(internalError()), nil
	}
	return withMeta(jsonResult(b, false), meta), nil
}

// pageOf returns the page of data from offset (moved forward to the start
// of a character) of at most limit bytes, ending at a character boundary;
// a page holds at least one character unless it is at the end.
func pageOf(data []byte, offset, limit int) readOutputPage {
	for offset < len(data) && !utf8.RuneStart(data[offset]) {
		offset++
	}
	end := min(offset+limit, len(data))
	for end > offset && end < len(data) && !utf8.RuneStart(data[end]) {
		end--
	}
	if end == offset && offset < len(data) { // limit smaller than one character
		_, w := utf8.DecodeRune(data[offset:])
		end = offset + w
	}
	return readOutputPage{Offset: offset, Data: string(data[offset:end]), NextOffset: end,
		TotalBytes: len(data), EOF: end == len(data)}
}
