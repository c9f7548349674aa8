package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools"
)

// RunCodeName is the name of the MCP tool that runs programs.
const RunCodeName = "run_code"

// reserved are MCP tool names of the server itself; a catalog tool with one
// of these names is not served directly (it stays callable from programs).
// search_tools and describe_tools are catalog tools (bindings.AddDiscovery),
// served like any other, and always (they are pinned).
var reserved = map[string]bool{RunCodeName: true, ReadOutputName: true}

// Config configures a Server. Every optional field's zero value is the safe
// default, stated on the field. New copies the Config; later changes to it
// have no effect.
type Config struct {
	// Runner runs the programs of run_code; its broker answers direct calls
	// and its catalog is the tool list. Required.
	Runner *bindings.Runner
	// Name and Version identify the server to clients. If empty, "sandcall"
	// and "dev".
	Name    string
	Version string
	// Instructions are sent to clients at initialization. If empty, a short
	// default explains when to use run_code.
	Instructions string
	// Logger receives operational messages (a recovered panic, a tool that
	// could not be served). Nothing logged here ever reaches a client. If
	// nil, messages are discarded.
	Logger *slog.Logger
	// Principal is who a session acts for when no bearer token says
	// otherwise: the local user over stdio, and every HTTP client when
	// Tokens is empty. It decides which tools are listed and bound, and
	// every call is authorized for it. If zero, bindings.LocalPrincipal.
	Principal bindings.Principal
	// Tokens are the bearer tokens HTTPHandler accepts, stored hashed, each
	// with its principal. If empty, HTTP requests are not authenticated
	// (serve HTTP on loopback only); if set, a request without one of them
	// gets 401, and each session acts for its token's principal.
	Tokens []bearer.Token
	// Hosted, if its JWT is set, makes HTTPHandler accept JWT bearer
	// tokens beside Tokens, and names the resource in the protected
	// resource metadata (hosted.go). Zero: static tokens only.
	Hosted HostedAuth
	// Metrics, if set, is served at /metrics by HTTPHandler, behind the
	// same bearer-token check as /mcp when Tokens is set. If nil, /metrics
	// is 404.
	Metrics http.Handler
	// ProgressInterval is the least time between two progress notifications
	// of one run_code call (sent only when the client asked for progress).
	// If zero, 100 ms; if negative, no progress notifications are sent.
	ProgressInterval time.Duration
	// ListThreshold keeps tools/list small whatever the catalog size: when
	// a program may call at most this many tools, run_code's description
	// lists each with its signature; when more, it names the tool families
	// and points to search_tools and describe_tools instead. Likewise, when
	// more than this many tools are exposed to direct callers, tools/list
	// holds only the pinned ones (policy `pin: true`, see bindings.Pinner)
	// and the discovery tools, plus, for each session, the tools programs
	// may not call that its search_tools calls surfaced (deferred loading,
	// announced with notifications/tools/list_changed). Every tool exposed
	// to direct callers is served whether listed or not, so whatever a
	// search shows can be called. If zero, 30; if negative, there is no
	// threshold (every tool is listed).
	ListThreshold int
	// MaxRequestBytes caps the body of one HTTP request (HTTPHandler); a
	// larger body is refused with 413. If zero, 4 MiB, or enough for the
	// runner's largest WebAssembly module in base64 (16 MiB → ~21.4 MiB)
	// plus 1 MiB, whichever is larger. Stdio lines are capped by the SDK
	// (mcp.DefaultMaxLineLength).
	MaxRequestBytes int64
	// AllowedOrigins lists browser origins (scheme://host[:port]) that
	// HTTPHandler accepts besides same-origin requests. If empty, a request
	// whose Origin header names another origin is refused with 403.
	AllowedOrigins []string
	// SessionTimeout closes HTTP sessions idle for this long. If zero, 30
	// minutes; if negative, idle sessions are never closed.
	SessionTimeout time.Duration
	// MaxOutputs and MaxOutputBytes bound the results kept for read_output
	// (results over the result budget, cut for the model): past either, the
	// least recently read goes. If zero, 64 outputs and 64 MiB.
	MaxOutputs     int
	MaxOutputBytes int64
	// OutputTTL is how long a kept result stays readable. If zero, 10
	// minutes.
	OutputTTL time.Duration
	// RateLimit, if set, limits HTTP requests per principal (HTTPHandler):
	// one over the allowance gets 429 with Retry-After. If nil, no limit.
	RateLimit RateLimiter
	// Store, if set, keeps the outputs of read_output (with their TTL and
	// principal binding) instead of this process's memory, so that every
	// replica sharing it can serve any ref (store.Redis). MaxOutputBytes
	// still bounds one output; the store bounds the rest (TTL, Redis
	// maxmemory). If nil, outputs live in memory (MaxOutputs, MaxOutputBytes).
	Store store.Store
	// MaxRequestStateBytes caps the sealed request state of an approval
	// without a session (MCP 2026-07-28, approvalstate.go): a suspension whose
	// state would be larger ends with E_OUTPUT_LIMIT, and a larger state
	// sent back is refused before it is opened. If zero, 1 MiB
	// (DefaultMaxRequestStateBytes).
	MaxRequestStateBytes int64
}

// Server is sandcall's MCP face: the run_code tool plus every catalog tool
// the policy exposes to direct callers, as typed MCP tools. It is safe for
// concurrent use; one Server may serve many sessions on several transports.
type Server struct {
	runner    *bindings.Runner
	broker    *bindings.Broker
	mcp       *mcp.Server
	log       *slog.Logger
	principal bindings.Principal
	progress  time.Duration
	threshold int // ListThreshold; 0: none
	maxBody   int64
	origins   map[string]bool
	idle      time.Duration
	tokens    *bearer.Verifier // nil: HTTP is not authenticated
	hosted    hostedAuth
	metrics   http.Handler
	outputs   *outputStore // results cut for the model, for read_output
	rate      RateLimiter  // nil: no transport rate limit
	shared    store.Store  // nil: outputs stay in outputs
	maxState  int64        // MaxRequestStateBytes; 0: the default

	inflight sync.Map   // HTTP request token → context.Context of the HTTP request
	drain    drainState // POSTs in flight; refusal once draining

	mu       sync.Mutex        // guards served, unlisted, hidden and deferred*; serializes Refresh
	served   map[string][]byte // MCP tool name → JSON of its definition
	unlisted int               // direct tools not listed at the last Refresh (over the threshold)
	hidden   map[string]bool   // served but never listed: deprecated aliases
	// deferred are served but listed only to the sessions whose
	// search_tools surfaced them (over the threshold, unpinned); deferredDefs
	// their definitions, re-added to announce a listing change.
	deferred     map[string]bool
	deferredDefs map[string]toolDef
	revealed     revealed // per session: deferred tools listed to it (deferred.go)

	sealOnce sync.Once
	seal     sealState // the key of approval request states (approvalstate.go)
}

// New returns a Server for cfg, with its tool list synced from the catalog.
func New(cfg Config) (*Server, error) {
	if cfg.Runner == nil {
		return nil, errors.New("mcpserver: Config.Runner is required")
	}
	s := &Server{
		runner:    cfg.Runner,
		broker:    cfg.Runner.Broker(),
		log:       cfg.Logger,
		principal: cfg.Principal,
		progress:  cfg.ProgressInterval,
		threshold: cfg.ListThreshold,
		maxBody:   cfg.MaxRequestBytes,
		rate:      cfg.RateLimit,
		idle:      cfg.SessionTimeout,
		origins:   make(map[string]bool),
		served:    make(map[string][]byte),
		metrics:   cfg.Metrics,
		outputs:   newOutputStore(cfg.MaxOutputs, cfg.MaxOutputBytes, cfg.OutputTTL, nil),
		shared:    cfg.Store,
		maxState:  cfg.MaxRequestStateBytes,
	}
	if len(cfg.Tokens) > 0 {
		ts, err := bearer.New(cfg.Tokens)
		if err != nil {
			return nil, err
		}
		s.tokens = ts
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if err := s.setupHosted(cfg.Hosted); err != nil {
		return nil, err
	}
	if s.principal.ID == "" {
		s.principal = bindings.LocalPrincipal
	}
	if s.progress == 0 {
		s.progress = 100 * time.Millisecond
	}
	switch {
	case s.threshold < 0:
		s.threshold = 0
	case s.threshold == 0:
		s.threshold = DefaultListThreshold
	}
	if s.maxBody <= 0 {
		s.maxBody = max(4<<20, int64(base64.StdEncoding.EncodedLen(s.runner.Limits().MaxModuleBytes))+1<<20)
	}
	if s.idle == 0 {
		s.idle = 30 * time.Minute
	}
	for _, o := range cfg.AllowedOrigins {
		n, ok := normalizeOrigin(o)
		if !ok {
			return nil, errors.New("mcpserver: invalid allowed origin " + o + ": want scheme://host[:port]")
		}
		s.origins[n] = true
	}
	name, version := cfg.Name, cfg.Version
	if name == "" {
		name = "sandcall"
	}
	if version == "" {
		version = "dev"
	}
	instr := cfg.Instructions
	if instr == "" {
		instr = "To combine several tool calls (loops, fan-out, filtering, aggregation), write one program and submit it with " +
			RunCodeName + ": only its result comes back. For a single lookup, call the tool directly."
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: name, Version: version}, &mcp.ServerOptions{
		Instructions: instr,
		Logger:       s.log,
		// Advertise tools with listChanged even while the catalog is empty:
		// Refresh may add tools later.
		// prompts/list is always answered (the SDK serves it, empty): say
		// so, as MCP 2026-07-28 requires of what a server handles.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Prompts: &mcp.PromptCapabilities{}},
		SetCacheable: s.setCacheable,
		// tools/list is paged after it is filtered (listpages.go).
		PageSize: sdkPageSize,
	})
	// Added last, so it is the outermost receiving middleware.
	s.mcp.AddReceivingMiddleware(s.filterToolsList, s.recoverMiddleware)
	if err := s.Refresh(); err != nil {
		return nil, err
	}
	return s, nil
}

// MaxRequestBytes is the largest request the server takes: the HTTP body
// cap, and the line length a stdio transport should allow (see
// Config.MaxRequestBytes).
func (s *Server) MaxRequestBytes() int64 { return s.maxBody }

// MCP returns the underlying go-sdk server, to connect it to a transport of
// your own or to add prompts and resources. Receiving middleware added to it
// runs outside the server's panic recovery.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one session on t (for example &mcp.StdioTransport{}) until the
// client disconnects or ctx is done.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, t)
}

// Refresh re-syncs the MCP tool list with the catalog and the policy: tools
// now exposed to direct callers are added or updated, tools no longer
// exposed are removed, and run_code's description is rebuilt with the
// current bindings. Connected clients get notifications/tools/list_changed
// (debounced by the SDK) only when something changed.
func (s *Server) Refresh() (err error) {
	defer func() {
		// The SDK panics on an invalid tool definition; report it instead.
		if p := recover(); p != nil {
			s.log.Error("mcpserver: refresh panicked", "panic", p)
			err = errors.New("mcpserver: refresh failed: invalid tool definition")
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()

	want := map[string]toolDef{RunCodeName: s.runCodeTool(), ReadOutputName: s.readOutputTool()}
	hidden := map[string]bool{}
	deferred := map[string]bool{}
	defs := map[string]toolDef{}
	direct := s.exposedToAny()
	large := s.overThreshold(direct)
	var unlisted, directOnly int
	var code map[string]bool // tools programs may call, when large
	if large {
		code = map[string]bool{}
		for _, t := range s.broker.Exposed(tools.Code, s.principal) {
			code[t.Name] = true
		}
	}
	for _, t := range direct {
		if reserved[t.Name] {
			s.log.Warn("mcpserver: tool name is reserved for the server; it is not served directly", "tool", t.Name)
			continue
		}
		// Over the threshold, an unpinned tool is served (a direct call
		// works) but not listed: a tool programs may call is reached from
		// run_code; one they may not is listed to a session once its
		// search_tools surfaces it (deferred.go).
		if large && !s.broker.Pinned(t, s.principal) {
			unlisted++
			deferred[t.Name] = true
			if !code[t.Name] {
				directOnly++
			}
		}
		d, err := s.directTool(t)
		if err != nil {
			s.log.Warn("mcpserver: tool not served directly", "tool", t.Name, "err", err)
			delete(deferred, t.Name)
			continue
		}
		want[t.Name] = d
		if deferred[t.Name] {
			defs[t.Name] = d
			continue // no aliases for an unlisted tool
		}
		// A deprecated alias stays callable by clients that learnt the old
		// name, through the same broker path (which adds next_action, or
		// answers E_TOOL_UNKNOWN naming the new tool after the window); it
		// is never listed (filterToolsList).
		for _, a := range t.Aliases {
			if _, taken := want[a.Name]; taken || reserved[a.Name] {
				continue
			}
			ad, err := s.directToolAs(t, a.Name)
			if err != nil {
				continue
			}
			ad.tool.Description = "Deprecated: renamed to " + t.Name + "; call " + t.Name + " instead."
			want[a.Name] = ad
			hidden[a.Name] = true
		}
	}

	if unlisted > 0 && unlisted != s.unlisted {
		s.log.Info("mcpserver: catalog over the list threshold; unpinned tools are listed once search_tools finds them "+
			"(those programs may not call) or reached from programs", "threshold", s.threshold, "unlisted", unlisted,
			"direct_only", directOnly)
	}
	s.unlisted = unlisted
	s.hidden = hidden
	s.deferred = deferred
	s.deferredDefs = defs

	var gone []string
	for name := range s.served {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
		for _, name := range gone {
			delete(s.served, name)
		}
	}
	for name, d := range want {
		fp, err := json.Marshal(d.tool)
		if err != nil {
			s.log.Warn("mcpserver: tool definition does not marshal", "tool", name, "err", err)
			continue
		}
		if old, ok := s.served[name]; ok && string(old) == string(fp) {
			continue
		}
		s.mcp.AddTool(d.tool, s.safe(name, d.handler))
		s.served[name] = fp
	}
	return nil
}

// toolDef is one MCP tool with its handler.
type toolDef struct {
	tool    *mcp.Tool
	handler mcp.ToolHandler
}

// exposedToAny returns the tools exposed to direct callers for at least
// one configured principal; tools/list then filters per principal.
func (s *Server) exposedToAny() []*tools.Tool {
	if s.tokens == nil {
		return s.broker.Exposed(tools.Direct, s.principal)
	}
	seen := map[string]bool{}
	var out []*tools.Tool
	for _, p := range append([]bindings.Principal{s.principal}, s.tokens.Principals()...) {
		for _, t := range s.broker.Exposed(tools.Direct, p) {
			if !seen[t.Name] {
				seen[t.Name] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// errorResult is the isError result of a failed direct call: the compact
// JSON of the *sandbox.Error as the text block, and no structured content.
//
// Why no structured content: MCP says structured content must conform to
// the tool's output schema, and the official TypeScript SDK enforces it even
// on error results (Client.callTool validates any structuredContent present
// and throws), so an error object there would break those clients for every
// tool that has an output schema. run_code is different: its output schema
// includes the error, so its failures carry the whole Result (runFailure).
func errorResult(e *sandbox.Error) *mcp.CallToolResult {
	b, err := json.Marshal(e)
	if err != nil { // cannot happen: Error has only plain fields
		b = []byte(`{"code":"E_INTERNAL","message":"internal error"}`)
	}
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: string(b)}},
	}
}

// runFailure is run_code's result for a run that failed before or outside
// the engine (bad arguments, a recovered panic).
func (s *Server) runFailure(e *sandbox.Error) *mcp.CallToolResult {
	return s.runResult(&sandbox.Result{Result: json.RawMessage("null"), Logs: []string{},
		Calls: sandbox.CallStats{ByTool: map[string]int{}}, Error: e})
}

// internalResult is the E_INTERNAL result of a call to the named tool.
func (s *Server) internalResult(tool string) *mcp.CallToolResult {
	if tool == RunCodeName {
		return s.runFailure(internalError())
	}
	return errorResult(internalError())
}

// jsonResult is a result whose structured content and text block are both
// the compact JSON b.
func jsonResult(b []byte, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError:           isError,
		StructuredContent: json.RawMessage(b),
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
	}
}

// httpContext returns the context of the HTTP request that carried req, if
// it came through HTTPHandler and is still in flight.
func (s *Server) httpContext(req *mcp.CallToolRequest) (context.Context, bool) {
	if req == nil || req.Extra == nil || req.Extra.Header == nil {
		return nil, false
	}
	tok := req.Extra.Header.Get(tokenHeader)
	if tok == "" {
		return nil, false
	}
	v, ok := s.inflight.Load(tok)
	if !ok {
		return nil, false
	}
	return v.(context.Context), true
}

// callContext derives the context of a tool call: the SDK's request context
// (cancelled by notifications/cancelled and by the session closing), also
// cancelled when the HTTP request that carried the call ends before the
// call does (the client went away; the SDK does not propagate that for
// stateful sessions).
func (s *Server) callContext(ctx context.Context, req *mcp.CallToolRequest) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	hctx, ok := s.httpContext(req)
	if !ok {
		return ctx, cancel
	}
	stop := context.AfterFunc(hctx, cancel)
	return ctx, func() { stop(); cancel() }
}
