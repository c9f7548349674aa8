package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools that require task augmentation (MCP 2025-11-25: a tool's
// execution.taskSupport "required") can only be called as tasks, which
// sandcall does not do: such a call always fails. The go-sdk's mcp.Tool
// drops the execution field, so the connection reads it from the raw
// tools/list answers (taskScanTransport) and Conn.Tools leaves those tools
// out, with the reason among the server's warnings (shown by `sandcall
// tools list` and `servers list`). Stdio servers only: wrapping an HTTP
// connection would hide the SDK's hook that opens its notification stream
// (see Conn.dial).

// taskScanTransport wraps a transport to note, from each tools/list
// answer, which tools require task augmentation.
type taskScanTransport struct {
	mcp.Transport
	seen *taskRequired
}

func (t *taskScanTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &taskScanConn{Connection: conn, seen: t.seen, pending: map[jsonrpc.ID]bool{}}, nil
}

type taskScanConn struct {
	mcp.Connection
	seen *taskRequired

	mu      sync.Mutex // guards pending
	pending map[jsonrpc.ID]bool
}

func (c *taskScanConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		c.mu.Lock()
		c.pending[req.ID] = true
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *taskScanConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		list := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if list && resp.Error == nil {
			c.seen.scan(resp.Result)
		}
	}
	return msg, err
}

// taskRequired holds the upstream names of the tools whose latest listing
// said execution.taskSupport "required".
type taskRequired struct {
	mu    sync.Mutex
	names map[string]bool
}

// scan reads one tools/list result. A page without the word taskSupport
// (nearly all of them) costs one byte search.
func (t *taskRequired) scan(result json.RawMessage) {
	if !bytes.Contains(result, []byte(`"taskSupport"`)) {
		return
	}
	var page struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	var req []string
	for _, tl := range page.Tools {
		if tl.Execution != nil && tl.Execution.TaskSupport == "required" {
			req = append(req, tl.Name)
		}
	}
	t.set(req)
}

// set records names as requiring tasks. A listing's pages accumulate; the
// names stay until the connection ends (a tool that stops requiring tasks
// is rare, and leaving it out errs on the safe side).
func (t *taskRequired) set(names []string) {
	if len(names) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.names == nil {
		t.names = map[string]bool{}
	}
	for _, n := range names {
		t.names[n] = true
	}
}

// has reports whether the upstream tool name requires tasks.
func (t *taskRequired) has(name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.names[name]
}
