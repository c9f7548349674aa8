package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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

	mu     sync.Mutex
	sess   *mcp.ClientSession // nil until the first successful dial
	cmd    *exec.Cmd          // stdio servers only
	closed bool
	dialed chan struct{} // closed, and replaced, at each new session

	// supervised: a Set re-dials the connection (supervise); restart asks
	// it to drop the session and dial again at once (see redialNow).
	supervised atomic.Bool
	restart    chan struct{}

	// stderr keeps the end of a stdio server's stderr (stderr.go).
	stderr *stderrRing

	// listChanged receives (without blocking, coalesced) when the server
	// sends notifications/tools/list_changed.
	listChanged chan struct{}

	// progress routes the server's progress notifications (progress.go).
	progress progressTokens
	// tasks names the tools that require task augmentation (tasks.go).
	tasks taskRequired
}

// Connect starts or dials the server, resolving its "!command" values, and
// completes the MCP handshake within the server's timeout.
// A server that refuses the credentials fails with an error wrapping
// ErrUnauthorized (HTTP 401) or ErrForbidden (HTTP 403); one that does not
// answer in time, with one wrapping context.DeadlineExceeded.
// A stdio server's connection error ends with the last lines of its
// stderr.
func Connect(ctx context.Context, s *Server) (*Conn, error) {
	return Dial(ctx, s, nil)
}

// Dial is Connect that also copies everything a stdio server writes to its
// stderr to w as it comes, if w is not nil (`sandcall servers test
// --verbose`).
func Dial(ctx context.Context, s *Server, w io.Writer) (*Conn, error) {
	c := newConn(s)
	c.stderr.tee = w
	if err := c.dial(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func newConn(s *Server) *Conn {
	return &Conn{Server: s, listChanged: make(chan struct{}, 1), stderr: &stderrRing{},
		dialed: make(chan struct{}), restart: make(chan struct{}, 1)}
}

// Errors of a connection an HTTP or SSE server refused.
var (
	// ErrUnauthorized: the server answered 401, it did not accept the
	// credentials (a missing, wrong or expired token).
	ErrUnauthorized = errors.New("the server answered 401 Unauthorized")
	// ErrForbidden: the server answered 403, the credentials lack a
	// permission it requires.
	ErrForbidden = errors.New("the server answered 403 Forbidden")
)

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
		st  *originTransport
		pt  *procTransport
	)
	switch r.Type {
	case TypeStdio:
		cmd = exec.Command(r.Command, r.Args...)
		cmd.Env = minimalEnv(r.Env, s.PassEnv)
		cmd.Dir = r.Cwd
		// Kept, bounded, for connection errors; never printed (upstream
		// logs are not ours to print) but with --verbose.
		c.stderr.reset()
		cmd.Stderr = c.stderr
		// A child of the server that keeps the stderr pipe open must
		// not hold Wait.
		cmd.WaitDelay = 2 * closeGrace
		childAttr(cmd)
		pt = &procTransport{CommandTransport: mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * closeGrace}}
		tr = pt // Close stops the server's group itself (stopServer)

	case TypeHTTP:
		if st, err = newOriginTransport(http.DefaultTransport, r.URL, r.Headers, r.FollowRedirects); err != nil {
			return err
		}
		// MaxEventSize is set: the SDK's zero leaves an event stream's
		// events unbounded, not at its documented default.
		tr = &mcp.StreamableClientTransport{Endpoint: r.URL, HTTPClient: st.client(), MaxRetries: -1, MaxEventSize: MaxResponseBytes}
	case TypeSSE:
		if st, err = newOriginTransport(http.DefaultTransport, r.URL, r.Headers, r.FollowRedirects); err != nil {
			return err
		}
		tr = &mcp.SSEClientTransport{Endpoint: r.URL, HTTPClient: st.client(), MaxEventSize: MaxResponseBytes}
	default:
		return fmt.Errorf("invalid server %q: type %q", s.Name, r.Type)
	}
	cctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sandcall", Version: "upstream"}, &mcp.ClientOptions{
		ProgressNotificationHandler: c.progress.handle,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.listChanged <- struct{}{}:
			default:
			}
		},
	})
	connected := make(chan struct{})
	if pt != nil {
		// A server stuck in its handshake is killed as soon as the dial is
		// given up (its timeout, Close, a signal), not after a grace
		// period: it has answered nothing worth waiting for.
		go func() {
			select {
			case <-cctx.Done():
				pt.kill()
			case <-connected:
			}
		}()
	}
	addProjectRoot(client)
	// Only a stdio connection is wrapped: the streamable HTTP client's
	// connection has an unexported hook (sessionUpdated) that opens the
	// stream notifications such as tools/list_changed arrive on, and a
	// wrapper would hide it (TestToolsApprove). An HTTP server's task-only
	// tools are therefore listed; their calls fail with the server's error.
	conn := tr
	if r.Type == TypeStdio {
		conn = &taskScanTransport{Transport: tr, seen: &c.tasks}
	}
	sess, err := client.Connect(cctx, conn, nil)
	close(connected)
	if err != nil {
		if pt != nil {
			pt.kill()
			_ = cmd.Wait() // reaps it, if the SDK has not
		}
		if st != nil {
			switch st.refused.Load() {
			case http.StatusUnauthorized:
				return fmt.Errorf("%w: %v", ErrUnauthorized, err)
			case http.StatusForbidden:
				return fmt.Errorf("%w: %v", ErrForbidden, err)
			}
		}
		if cctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("timed out after %v: %w", s.Timeout, context.DeadlineExceeded)
		}
		if errors.Is(err, exec.ErrNotFound) {
			err = fmt.Errorf("the command %q was not found on PATH: install it, or fix \"command\" of %q in %s (%w)", s.Command, s.Name, s.Source, err)
		}
		if cmd != nil {
			return c.stderr.withStderr(err)
		}
		return err
	}
	c.mu.Lock()
	if c.closed { // Close ran during the dial
		c.mu.Unlock()
		_ = sess.Close()
		return errors.New("connection closed")
	}
	c.sess, c.cmd = sess, cmd
	close(c.dialed)
	c.dialed = make(chan struct{})
	c.mu.Unlock()
	return nil
}

// redialNow has the supervising Set drop old, a session an answer left
// unusable (an HTTP client that failed on an answer over the cap), and
// dial again without its backoff, and waits (within ctx) until a new
// session is in place: the next call finds one. A connection no Set
// supervises is left as it is.
func (c *Conn) redialNow(ctx context.Context, old *mcp.ClientSession) {
	if !c.supervised.Load() {
		return
	}
	select {
	case c.restart <- struct{}{}:
	default:
	}
	for {
		c.mu.Lock()
		cur, next, closed := c.sess, c.dialed, c.closed
		c.mu.Unlock()
		if cur != old || closed {
			return
		}
		select {
		case <-next:
		case <-ctx.Done():
			return
		}
	}
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

// Close ends the session (and stops a stdio server). A closed Conn is not
// dialled again; closing twice is harmless.
func (c *Conn) Close() error {
	c.mu.Lock()
	sess, was := c.sess, c.closed
	c.closed = true
	c.mu.Unlock()
	if sess == nil || was {
		return nil
	}
	c.mu.Lock()
	cmd := c.cmd
	c.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return sess.Close()
	}
	return stopServer(sess, cmd.Process.Pid)
}

// NestedEnv is set in the environment of every stdio upstream server. A
// sandcall started with it does not start upstream servers of its own, so a
// configuration that names sandcall itself cannot recurse.
const NestedEnv = "SANDCALL_UPSTREAM_CHILD"

// minimalEnv is PATH, HOME, LANG and the pass variables from sandcall's
// environment plus the server's own env: other secrets in sandcall's
// environment do not leak upstream.
func minimalEnv(extra map[string]string, pass []string) []string {
	env := []string{NestedEnv + "=1"}
	for _, k := range append([]string{"PATH", "HOME", "LANG"}, pass...) {
		if k == NestedEnv || strings.ContainsAny(k, "=\x00") {
			continue
		}
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
		if c.tasks.has(ut.Name) {
			errs = append(errs, fmt.Errorf("server %q: tool %q is left out: it requires task augmentation (execution.taskSupport \"required\"), which sandcall does not support, so every call of it would fail", c.Server.Name, ut.Name))
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
	// The input schema is encoded once, for the hash and for parsing: a
	// server of thousands of tools attaches in half the time.
	rawIn, err := json.Marshal(ut.InputSchema)
	if err != nil {
		return Listed{}, fmt.Errorf("input schema: %w", err)
	}
	def, err := json.Marshal(struct {
		Name         string               `json:"name"`
		Title        string               `json:"title,omitempty"`
		Description  string               `json:"description,omitempty"`
		InputSchema  json.RawMessage      `json:"inputSchema"`
		OutputSchema any                  `json:"outputSchema,omitempty"`
		Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	}{ut.Name, ut.Title, ut.Description, rawIn, ut.OutputSchema, ut.Annotations})
	if err != nil {
		return Listed{}, err
	}
	sum := sha256.Sum256(def)
	var in *jsonschema.Schema
	if string(rawIn) != "null" {
		if in, err = tools.ParseSchema(rawIn); err != nil {
			return Listed{}, fmt.Errorf("input schema: %w", err)
		}
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
		SourceName:  CleanText(ut.Name, 200),
		DirectRaw:   true,
	}
	wrapped := wrapsResult(ut.OutputSchema)
	t.OutputSchema = programSchema(ut.OutputSchema, wrapped)
	if t.Title == "" && ut.Annotations != nil {
		t.Title = CleanText(ut.Annotations.Title, 200)
	}
	t.Handler = c.traced(ut.Name, c.handler(ut.Name, wrapped))
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

// programSchema is the output schema of what a program gets from an
// upstream tool (see unwrap): the "result" property of a {"result": v}
// wrapper, with the wrapper's $defs moved into it so that references still
// resolve, or an object schema as is. It is nil when the upstream lists no
// usable output schema (MCP wants an object one; any other is ignored).
// Direct callers see the upstream's own schema again: package mcpserver
// wraps a non-object output schema as {"result": v} with "result"
// required, which is how sandcall and most servers write theirs.
func programSchema(out any, wrapped bool) *jsonschema.Schema {
	s, err := schemaOf(out)
	if err != nil || s == nil || (s.Type != "object" && !(len(s.Types) == 1 && s.Types[0] == "object")) {
		return nil
	}
	if !wrapped {
		return s
	}
	inner := s.Properties["result"]
	if inner == nil {
		return nil
	}
	c := *inner
	if c.Defs == nil {
		c.Defs = s.Defs
	}
	if c.Definitions == nil {
		c.Definitions = s.Definitions
	}
	return &c
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

// ToolPrefix is the prefix every catalog name of server's tools starts
// with: the sanitized server name and "_".
func ToolPrefix(server string) string { return sanitize(server) + "_" }

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

// handler forwards a call. A direct caller (an MCP client of sandcall, as
// tools.CallerFrom tells) gets the upstream's CallToolResult as is,
// as JSON (tools.Tool.DirectRaw); anyone else gets the unwrapped value.
func (c *Conn) handler(upstreamName string, wrapped bool) tools.Handler {
	return func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		cctx, cancel := context.WithTimeout(ctx, c.Server.Timeout)
		defer cancel()
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		sess := c.session()
		if sess == nil {
			return nil, tools.Transient(fmt.Sprintf("upstream server %q is not connected", c.Server.Name), "the upstream server may be down; retry later")
		}
		params := &mcp.CallToolParams{Name: upstreamName, Arguments: args}
		endProgress := c.progress.token(ctx, params)
		traceMeta(ctx, params)
		res, err := sess.CallTool(cctx, params)
		endProgress()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The error's text may be the upstream's own (untrusted), and
			// Go's transport errors quote the server's URL, with any
			// secret in its path or query.
			msg := fmt.Sprintf("upstream server %q: %s", c.Server.Name, CleanText(redactURLs(err.Error()), maxErrorBytes))
			if tooLarge(err) {
				// Not retryable: the same call gets the same answer. A
				// stdio connection is kept (frameFilter); an HTTP client
				// fails its connection on it: a new one is in place before
				// this call returns.
				if !keptAfterTooLarge(err) {
					c.redialNow(ctx, sess)
				}
				return nil, tools.Failed(fmt.Sprintf("upstream server %q answered the call of %s with more than %d MiB, more than sandcall reads in one answer; the answer was dropped",
					c.Server.Name, CleanText(upstreamName, 128), MaxResponseBytes>>20),
					"Ask the tool for less: a filter, a smaller page or fewer fields, and page through the rest.")
			}
			if answered(err) {
				return nil, tools.Failed(msg, "the upstream server answered with this error; retrying the same call fails the same way: check the arguments against the tool's schema")
			}
			if errors.Is(cctx.Err(), context.DeadlineExceeded) {
				msg = fmt.Sprintf("upstream server %q did not answer within %v", c.Server.Name, c.Server.Timeout)
			}
			return nil, tools.Transient(msg, "the upstream server may be down; retry later")
		}
		// The result's _meta may carry labels (information flow); the
		// broker decides whether to honour them.
		tools.ReportResultMeta(ctx, res.Meta)
		if caller, ok := tools.CallerFrom(ctx); ok && caller == tools.Direct {
			b, err := json.Marshal(res)
			if err != nil {
				return nil, tools.Failed(fmt.Sprintf("upstream server %q: bad result: %v", c.Server.Name, err), "")
			}
			return b, nil
		}
		return unwrap(c.Server.Name, res, wrapped)
	}
}

// urlRE matches an http(s) URL in an error message.
var urlRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`https?://[^\s"'<>]+`) })

// redactURLs shortens every http(s) URL in s to its scheme and host: the
// path, query or user info may hold a credential (servers put API keys in
// either), and an error message must never carry one.
func redactURLs(s string) string {
	return urlRE().ReplaceAllStringFunc(s, func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return "<url>"
		}
		return u.Scheme + "://" + u.Host + "/…"
	})
}

// answered reports whether err is a JSON-RPC error the upstream server sent
// in answer to the call (an unknown tool, invalid parameters, or a tool
// handler's error, which the go-sdk sends with code 0): the server is up and
// the same call would fail the same way, so it is not worth retrying. The
// SDK's own errors for a connection that is closing or a request the
// transport rejected (an HTTP 5xx, say) carry other codes and stay
// transient.
func answered(err error) bool {
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		return false
	}
	switch werr.Code {
	case 0, jsonrpc.CodeInvalidRequest, jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams:
		return true
	}
	return false
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
	if len(texts) < len(res.Content) {
		// Images, audio, resources: the program gets every block as an
		// object (content.go), text blocks included, in order.
		return contentValue(server, res.Content)
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
