package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// MaxDescriptionBytes caps an upstream tool's description.
const MaxDescriptionBytes = 2 << 10

// maxErrorBytes caps an upstream error message passed on to a program.
const maxErrorBytes = 2 << 10

// Conn is a connection to one upstream server. A Set re-dials it when the
// session drops; the tools' handlers always use the current session.
type Conn struct {
	Server *Server

	mu   sync.Mutex
	sess *mcp.ClientSession
	cmd  *exec.Cmd // stdio servers only

	// listChanged receives (without blocking, coalesced) when the server
	// sends notifications/tools/list_changed.
	listChanged chan struct{}
}

// Connect starts or dials the server, resolving its "!command" values, and
// completes the MCP handshake within the server's timeout.
func Connect(ctx context.Context, s *Server) (*Conn, error) {
	c := &Conn{Server: s, listChanged: make(chan struct{}, 1)}
	if err := c.dial(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// dial opens a new session to the server and makes it c's current one.
func (c *Conn) dial(ctx context.Context) error {
	s := c.Server
	r, err := s.resolve(ctx)
	if err != nil {
		return err
	}
	var (
		tr  mcp.Transport
		cmd *exec.Cmd
	)
	switch r.Type {
	case TypeStdio:
		cmd = exec.Command(r.Command, r.Args...)
		cmd.Env = minimalEnv(r.Env)
		cmd.Dir = r.Cwd
		cmd.Stderr = nil // discarded: upstream logs are not ours to print
		tr = &mcp.CommandTransport{Command: cmd}
	case TypeHTTP:
		tr = &mcp.StreamableClientTransport{Endpoint: r.URL, HTTPClient: headerClient(r.Headers), MaxRetries: -1}
	case TypeSSE:
		tr = &mcp.SSEClientTransport{Endpoint: r.URL, HTTPClient: headerClient(r.Headers)}
	default:
		return fmt.Errorf("invalid server %q: type %q", s.Name, r.Type)
	}
	cctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sandcall", Version: "upstream"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.listChanged <- struct{}{}:
			default:
			}
		},
	})
	sess, err := client.Connect(cctx, tr, nil)
	if err != nil {
		if cmd != nil && cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if cctx.Err() != nil && ctx.Err() == nil {
			return fmt.Errorf("timed out after %v: %w", s.Timeout, context.DeadlineExceeded)
		}
		return err
	}
	c.mu.Lock()
	c.sess, c.cmd = sess, cmd
	c.mu.Unlock()
	return nil
}

// session returns the current session.
func (c *Conn) session() *mcp.ClientSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

// pid is the current stdio server process's id, or 0.
func (c *Conn) pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// Close ends the session (and stops a stdio server).
func (c *Conn) Close() error { return c.session().Close() }

// NestedEnv is set in the environment of every stdio upstream server. A
// sandcall started with it does not start upstream servers of its own, so a
// configuration that names sandcall itself cannot recurse.
const NestedEnv = "SANDCALL_UPSTREAM_CHILD"

// minimalEnv is PATH, HOME and LANG from sandcall's environment plus the
// server's own env: secrets in sandcall's environment do not leak upstream.
func minimalEnv(extra map[string]string) []string {
	env := []string{NestedEnv + "=1"}
	for _, k := range []string{"PATH", "HOME", "LANG"} {
		if _, set := extra[k]; set {
			continue
		}
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}

func headerClient(h map[string]string) *http.Client {
	if len(h) == 0 {
		return nil
	}
	return &http.Client{Transport: &headerTransport{base: http.DefaultTransport, headers: h}}
}

// Listed is one upstream tool converted for the catalog.
type Listed struct {
	Tool *tools.Tool
	// Upstream is the tool's name on the server.
	Upstream string
	// Hash pins the upstream definition (name, description, schemas,
	// annotations).
	Hash string
}

// Tools lists the server's tools, converted. Tools that cannot be converted
// (bad schema, a name that clashes after sanitizing) are reported in errs
// and left out; err is a failure to list at all.
func (c *Conn) Tools(ctx context.Context) (out []Listed, errs []error, err error) {
	lctx, cancel := context.WithTimeout(ctx, c.Server.Timeout)
	defer cancel()
	var all []*mcp.Tool
	for t, err := range c.session().Tools(lctx, nil) {
		if err != nil {
			return nil, nil, err
		}
		all = append(all, t)
	}
	byName := map[string]string{}
	for _, ut := range all {
		name := ToolName(c.Server.Name, ut.Name)
		if prev, dup := byName[name]; dup {
			errs = append(errs, fmt.Errorf("server %q: tools %q and %q both become %q; both are left out", c.Server.Name, prev, ut.Name, name))
			continue
		}
		byName[name] = ut.Name
	}
	clash := map[string]bool{}
	for _, e := range all {
		n := ToolName(c.Server.Name, e.Name)
		if byName[n] != e.Name {
			clash[n] = true
		}
	}
	for _, ut := range all {
		name := ToolName(c.Server.Name, ut.Name)
		if clash[name] {
			continue
		}
		l, err := c.convert(name, ut)
		if err != nil {
			errs = append(errs, fmt.Errorf("server %q: tool %q: %w", c.Server.Name, ut.Name, err))
			continue
		}
		out = append(out, l)
	}
	return out, errs, nil
}

func (c *Conn) convert(name string, ut *mcp.Tool) (Listed, error) {
	def, err := json.Marshal(struct {
		Name         string               `json:"name"`
		Title        string               `json:"title,omitempty"`
		Description  string               `json:"description,omitempty"`
		InputSchema  any                  `json:"inputSchema"`
		OutputSchema any                  `json:"outputSchema,omitempty"`
		Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	}{ut.Name, ut.Title, ut.Description, ut.InputSchema, ut.OutputSchema, ut.Annotations})
	if err != nil {
		return Listed{}, err
	}
	sum := sha256.Sum256(def)
	in, err := schemaOf(ut.InputSchema)
	if err != nil {
		return Listed{}, fmt.Errorf("input schema: %w", err)
	}
	if in == nil {
		in = &jsonschema.Schema{Type: "object"}
	}
	if in.Type == "object" && in.Properties == nil {
		in.Properties = map[string]*jsonschema.Schema{}
	}
	t := &tools.Tool{
		Name:        name,
		Title:       CleanText(ut.Title, 200),
		Description: CleanText(ut.Description, MaxDescriptionBytes),
		InputSchema: in,
		Effects:     effects(ut.Annotations),
		Source:      c.Server.Name,
	}
	if t.Title == "" && ut.Annotations != nil {
		t.Title = CleanText(ut.Annotations.Title, 200)
	}
	t.Handler = c.handler(ut.Name, wrapsResult(ut.OutputSchema))
	return Listed{Tool: t, Upstream: ut.Name, Hash: hex.EncodeToString(sum[:])}, nil
}

func schemaOf(v any) (*jsonschema.Schema, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return nil, nil
	}
	return tools.ParseSchema(b)
}

// effects maps MCP annotations, with MCP's defaults: a tool that is not
// read-only is destructive and open-world unless it says otherwise.
func effects(a *mcp.ToolAnnotations) tools.Effects {
	if a == nil {
		return tools.Effects{Destructive: true, OpenWorld: true}
	}
	e := tools.Effects{ReadOnly: a.ReadOnlyHint, Idempotent: a.IdempotentHint, OpenWorld: true}
	if a.OpenWorldHint != nil {
		e.OpenWorld = *a.OpenWorldHint
	}
	if !e.ReadOnly {
		e.Destructive = a.DestructiveHint == nil || *a.DestructiveHint
	}
	return e
}

// ToolName is the catalog name of upstream tool of server: lower-case,
// every character outside [a-z0-9_] replaced by "_", runs of "_" collapsed,
// and a redundant "<server>_" prefix of the tool dropped once.
func ToolName(server, tool string) string {
	s, t := sanitize(server), sanitize(tool)
	if rest, ok := strings.CutPrefix(t, s+"_"); ok && rest != "" {
		t = rest
	}
	return s + "_" + t
}

func sanitize(s string) string {
	var b strings.Builder
	last := byte(0)
	for _, r := range strings.ToLower(s) {
		c := byte('_')
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			c = byte(r)
		}
		if c == '_' && last == '_' {
			continue
		}
		b.WriteByte(c)
		last = c
	}
	return b.String()
}

// CleanText strips control characters (except newline and tab), zero-width
// and bidi-control characters from s and caps it at max bytes on a rune
// boundary.
func CleanText(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), r == unicode.ReplacementChar:
			continue
		}
		if b.Len()+len(string(r)) > max {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// wrapsResult reports whether an output schema is the {"result": value}
// wrapper servers (sandcall among them) use because MCP wants structured
// content to be an object: an object whose only property is "result".
func wrapsResult(out any) bool {
	m, ok := out.(map[string]any)
	if !ok || m["type"] != "object" {
		return false
	}
	props, ok := m["properties"].(map[string]any)
	if !ok || len(props) != 1 {
		return false
	}
	_, ok = props["result"]
	return ok
}

func (c *Conn) handler(upstreamName string, wrapped bool) tools.Handler {
	return func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		cctx, cancel := context.WithTimeout(ctx, c.Server.Timeout)
		defer cancel()
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		res, err := c.session().CallTool(cctx, &mcp.CallToolParams{Name: upstreamName, Arguments: args})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			msg := fmt.Sprintf("upstream server %q: %v", c.Server.Name, err)
			if errors.Is(cctx.Err(), context.DeadlineExceeded) {
				msg = fmt.Sprintf("upstream server %q did not answer within %v", c.Server.Name, c.Server.Timeout)
			}
			return nil, tools.Transient(sandbox.Cap(msg, maxErrorBytes), "the upstream server may be down; retry later")
		}
		return unwrap(c.Server.Name, res, wrapped)
	}
}

// unwrap turns a CallToolResult into the value a program gets.
// If wrapped, structured content {"result": v} is v.
func unwrap(server string, res *mcp.CallToolResult, wrapped bool) (json.RawMessage, error) {
	var texts []string
	for _, ct := range res.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	text := strings.Join(texts, "\n")
	if res.IsError {
		msg := CleanText(text, maxErrorBytes)
		if msg == "" {
			msg = "the tool failed without a message"
		}
		return nil, tools.Failed(fmt.Sprintf("upstream server %q: %s", server, msg), "")
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, tools.Failed(fmt.Sprintf("upstream server %q: bad structured content: %v", server, err), "")
		}
		if wrapped {
			var w map[string]json.RawMessage
			if json.Unmarshal(b, &w) == nil && len(w) == 1 && w["result"] != nil {
				return w["result"], nil
			}
		}
		return b, nil
	}
	if len(texts) == 0 {
		return json.RawMessage("null"), nil
	}
	if t := strings.TrimSpace(text); json.Valid([]byte(t)) {
		return json.RawMessage(t), nil
	}
	b, _ := json.Marshal(text)
	return b, nil
}

// Pins remembers the hash of each upstream tool's definition at first sight
// (in memory for now). It is safe for concurrent use.
type Pins struct {
	mu      sync.Mutex
	hashes  map[string]string // tool name → pinned hash
	pending map[string]string // tool name → changed hash awaiting approval
}

// Check pins hash for name at first sight and reports whether hash matches
// the pin. A mismatch is remembered as pending until Approve.
func (p *Pins) Check(name, hash string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hashes == nil {
		p.hashes, p.pending = map[string]string{}, map[string]string{}
	}
	old, ok := p.hashes[name]
	if !ok {
		p.hashes[name] = hash
		return true
	}
	if old == hash {
		delete(p.pending, name)
		return true
	}
	p.pending[name] = hash
	return false
}

// Pending returns the tools whose definitions changed and await approval,
// sorted.
func (p *Pins) Pending() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.pending))
	for n := range p.pending {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Approve accepts the changed definition of name: it becomes the pin, and
// the next refresh adds the tool again. It reports whether a change was
// pending.
func (p *Pins) Approve(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.pending[name]
	if ok {
		p.hashes[name] = h
		delete(p.pending, name)
	}
	return ok
}
