package mcpserver_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
	"github.com/sandcall/sandcall/tools"
)

const summarySHA256 = "ced1ffb502f5a3b35468831e1b0cdef8f4aa4595953c23304d30e28b5555c250"

// protocols are the protocol versions the in-memory tests run under: the
// SDK's latest (per-request, sessionless) and the session-based 2025-06-18
// most clients speak today.
var protocols = []string{"", "2025-06-18"}

// harness is a real server (real engine, real demo tools, real broker) and a
// go-sdk client connected over in-memory transports.
type harness struct {
	srv   *mcpserver.Server
	cat   *tools.Catalog
	cs    *mcp.ClientSession
	audit *auditLog
	wire  *wireLog
}

type options struct {
	extra     []*tools.Tool
	exec      func(sandbox.Executor) sandbox.Executor
	auth      bindings.Authorizer
	protocol  string
	client    mcp.ClientOptions
	progress  time.Duration
	serverLog *slog.Logger
	origins   []string
}

func newHarness(t *testing.T, o options) *harness {
	t.Helper()
	srv, cat, audit := newServer(t, o)
	return connect(t, srv, cat, audit, o)
}

// harnessFor connects a client to a server for runner.
func harnessFor(t *testing.T, runner *bindings.Runner) *harness {
	t.Helper()
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner})
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, srv, runner.Broker().Catalog(), nil, options{})
}

func connect(t *testing.T, srv *mcpserver.Server, cat *tools.Catalog, audit *auditLog, o options) *harness {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Run(ctx, st)
	}()
	wire := &wireLog{Transport: ct}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &o.client)
	cs, err := client.Connect(ctx, wire, &mcp.ClientSessionOptions{ProtocolVersion: o.protocol})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return &harness{srv: srv, cat: cat, cs: cs, audit: audit, wire: wire}
}

// newServer builds a server with the real engine and the demo tools, plus
// o.extra.
func newServer(t *testing.T, o options) (*mcpserver.Server, *tools.Catalog, *auditLog) {
	t.Helper()
	cat, err := tools.NewCatalog(append(demo.Tools(), o.extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	audit := newAuditLog()
	broker, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat, Authorizer: o.auth, Audit: slog.New(audit), Logger: o.serverLog})
	if err != nil {
		t.Fatal(err)
	}
	var exec sandbox.Executor = js.New(js.Config{})
	if o.exec != nil {
		exec = o.exec(exec)
	}
	runner, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, ProgressInterval: o.progress, Logger: o.serverLog,
		AllowedOrigins: o.origins})
	if err != nil {
		t.Fatal(err)
	}
	return srv, cat, audit
}

func (h *harness) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): protocol error %v", name, err)
	}
	h.checkOutputSchema(t, name, res)
	return res
}

// checkOutputSchema validates structured content against the tool's listed
// output schema, as the TypeScript SDK does for every result (errors
// included).
func (h *harness) checkOutputSchema(t *testing.T, name string, res *mcp.CallToolResult) {
	t.Helper()
	if res.StructuredContent == nil {
		if !res.IsError {
			t.Errorf("%s: success without structured content", name)
		}
		return
	}
	lt, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if tl.Name != name {
			continue
		}
		b, _ := json.Marshal(tl.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: output schema: %v", name, err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema: %v", name, err)
		}
		if err := rs.Validate(res.StructuredContent); err != nil {
			t.Errorf("%s: structured content does not match the output schema: %v", name, err)
		}
		return
	}
	t.Errorf("%s: not listed", name)
}

// runResult decodes run_code's structured content.
type runResult struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Logs   []string        `json:"logs"`
	Calls  struct {
		Total, OK, Failed, Denied int
		ByTool                    map[string]int `json:"by_tool"`
	} `json:"calls"`
	Truncated  bool           `json:"truncated"`
	DurationMS float64        `json:"duration_ms"`
	RunID      string         `json:"run_id"`
	Error      *sandbox.Error `json:"error"`
}

func decodeStructured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return v
}

// textJSON returns the text block, which must hold the compact JSON of the
// structured content.
func textJSON(t *testing.T, res *mcp.CallToolResult) []byte {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want 1 content block, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	if !json.Valid([]byte(tc.Text)) {
		t.Fatalf("text block is not JSON: %q", tc.Text)
	}
	var a, b any
	_ = json.Unmarshal([]byte(tc.Text), &a)
	sb, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(sb, &b)
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	if !bytes.Equal(ab, bb) {
		t.Fatalf("text block %s differs from structured content %s", ab, bb)
	}
	return []byte(tc.Text)
}

// wantCode checks a failed call: run_code answers its whole Result as
// structured content (and text); a direct tool answers the *sandbox.Error as
// the text block only (see errorResult for why).
func wantCode(t *testing.T, res *mcp.CallToolResult, code sandbox.Code) *sandbox.Error {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want isError with %s, got success %v", code, res.StructuredContent)
	}
	var e *sandbox.Error
	if res.StructuredContent != nil {
		textJSON(t, res)
		e = decodeStructured[runResult](t, res).Error
	} else {
		if len(res.Content) != 1 {
			t.Fatalf("want 1 content block, got %d", len(res.Content))
		}
		tc, ok := res.Content[0].(*mcp.TextContent)
		if !ok || json.Unmarshal([]byte(tc.Text), &e) != nil {
			t.Fatalf("error text block %v is not a JSON error", res.Content[0])
		}
	}
	if e == nil || e.Code != code {
		t.Fatalf("want error code %s, got %+v", code, e)
	}
	return e
}

func TestListTools(t *testing.T) {
	for _, proto := range protocols {
		t.Run("proto="+proto, func(t *testing.T) {
			h := newHarness(t, options{protocol: proto})
			lt, err := h.cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*mcp.Tool{}
			for _, tl := range lt.Tools {
				byName[tl.Name] = tl
			}
			want := []string{"get_budget_by_level", "get_expenses", "get_financials", "get_price_history", "get_stock_snapshot",
				"get_team_members", "ping", "read_output", "run_code", "search_competitors", "search_news"}
			var got []string
			for n := range byName {
				got = append(got, n)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("tools = %v, want %v", got, want)
			}
			for _, tl := range lt.Tools {
				for what, s := range map[string]any{"input": tl.InputSchema, "output": tl.OutputSchema} {
					m, ok := s.(map[string]any)
					if !ok || m["type"] != "object" {
						t.Errorf("%s: %s schema is %v, want an object schema", tl.Name, what, s)
					}
				}
				if tl.Annotations == nil {
					t.Errorf("%s: no annotations", tl.Name)
				}
			}
			for _, n := range []string{"get_budget_by_level", "get_expenses", "get_team_members", "ping"} {
				a := byName[n].Annotations
				if !a.ReadOnlyHint || !a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint ||
					a.OpenWorldHint == nil || *a.OpenWorldHint {
					t.Errorf("%s: annotations %+v do not match the tool's effects (read-only, idempotent, closed world)", n, a)
				}
			}
			// ping returns an integer: its output is wrapped as {"result": n}.
			props := byName["ping"].OutputSchema.(map[string]any)["properties"].(map[string]any)
			if r, ok := props["result"].(map[string]any); !ok || r["type"] != "integer" {
				t.Errorf("ping output schema = %v, want {result: integer}", byName["ping"].OutputSchema)
			}
			rc := byName["run_code"]
			// The demo tools are all read-only and closed-world, so a program is too.
			if a := rc.Annotations; !a.ReadOnlyHint || *a.DestructiveHint || *a.OpenWorldHint {
				t.Errorf("run_code annotations %+v, want read-only, not destructive, closed world", a)
			}
			for _, n := range []string{"get_budget_by_level", "get_expenses", "get_team_members", "ping", "tools.call", "ToolError", "console.log"} {
				if !strings.Contains(rc.Description, n) {
					t.Errorf("run_code description does not mention %s", n)
				}
			}
			in := rc.InputSchema.(map[string]any)["properties"].(map[string]any)
			for _, p := range []string{"code", "language", "module_base64", "input", "timeout_ms"} {
				if _, ok := in[p]; !ok {
					t.Errorf("run_code input schema lacks %s", p)
				}
			}
			out := rc.OutputSchema.(map[string]any)["properties"].(map[string]any)
			for _, p := range []string{"ok", "result", "logs", "calls", "truncated", "duration_ms", "run_id", "error"} {
				if _, ok := out[p]; !ok {
					t.Errorf("run_code output schema lacks %s", p)
				}
			}
		})
	}
}

func TestRunCodeExpense(t *testing.T) {
	for _, proto := range protocols {
		t.Run("proto="+proto, func(t *testing.T) {
			h := newHarness(t, options{protocol: proto})
			res := h.call(t, "run_code", map[string]any{"code": expense.Program})
			if res.IsError {
				t.Fatalf("run failed: %v", res.StructuredContent)
			}
			// The bytes on the wire: structuredContent.result as the server sent it.
			raw := h.wire.lastResult(t)
			var env struct {
				StructuredContent struct {
					Result json.RawMessage `json:"result"`
				} `json:"structuredContent"`
			}
			if err := json.Unmarshal(raw, &env); err != nil {
				t.Fatal(err)
			}
			ref := expense.ReferenceSummary()
			if !bytes.Equal(env.StructuredContent.Result, ref) {
				t.Fatalf("structuredContent.result differs from the reference:\n got %s\nwant %s", env.StructuredContent.Result, ref)
			}
			sum := sha256.Sum256(env.StructuredContent.Result)
			if hex.EncodeToString(sum[:]) != summarySHA256 {
				t.Fatalf("sha256 = %x", sum)
			}
			// The text block carries the same bytes.
			var text struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(textJSON(t, res), &text); err != nil || !bytes.Equal(text.Result, ref) {
				t.Fatalf("text block result differs from the reference (%v)", err)
			}
			r := decodeStructured[runResult](t, res)
			if !r.OK || r.Error != nil || r.RunID == "" {
				t.Fatalf("result = %+v", r)
			}
			if r.Calls.Total != 56 || r.Calls.OK != 56 || r.Calls.Failed != 0 || r.Calls.Denied != 0 {
				t.Fatalf("calls = %+v, want 56 ok", r.Calls)
			}
			wantBy := map[string]int{"get_team_members": 1, "get_budget_by_level": 5, "get_expenses": 50}
			if len(r.Calls.ByTool) != len(wantBy) {
				t.Fatalf("by_tool = %v, want %v", r.Calls.ByTool, wantBy)
			}
			for k, v := range wantBy {
				if r.Calls.ByTool[k] != v {
					t.Fatalf("by_tool = %v, want %v", r.Calls.ByTool, wantBy)
				}
			}
		})
	}
}

func TestRunCodeInputAndLogs(t *testing.T) {
	h := newHarness(t, options{})
	res := h.call(t, "run_code", map[string]any{
		"code":  `console.log("n is", input.n); return (await tools.ping({n: input.n})) * 2;`,
		"input": map[string]any{"n": 20},
	})
	r := decodeStructured[runResult](t, res)
	if res.IsError || string(r.Result) != "42" {
		t.Fatalf("result = %s (%+v)", r.Result, r.Error)
	}
	if len(r.Logs) != 1 || !strings.Contains(r.Logs[0], "n is") {
		t.Fatalf("logs = %q", r.Logs)
	}
}

func TestRunCodeFailures(t *testing.T) {
	for _, proto := range protocols {
		t.Run("proto="+proto, func(t *testing.T) {
			h := newHarness(t, options{protocol: proto})
			cases := []struct {
				name string
				args map[string]any
				code sandbox.Code
			}{
				{"throw", map[string]any{"code": `throw new Error("boom")`}, sandbox.EGuestError},
				{"syntax", map[string]any{"code": `return (`}, sandbox.ESyntax},
				{"uncaught tool error", map[string]any{"code": `return await tools.get_budget_by_level({level: "L9"})`}, sandbox.EToolArgs},
				{"unknown tool", map[string]any{"code": `return await tools.call("nope", {})`}, sandbox.EToolUnknown},
				{"timeout", map[string]any{"code": `while (true) {}`, "timeout_ms": 50}, sandbox.ETimeout},
				{"missing code", map[string]any{}, sandbox.EToolArgs},
				{"unknown argument", map[string]any{"code": "return 1", "kode": 1}, sandbox.EToolArgs},
				{"bad language", map[string]any{"code": "return 1", "language": "cobol"}, sandbox.EToolArgs},
				{"timeout over the maximum", map[string]any{"code": "return 1", "timeout_ms": 10 * 60 * 1000}, sandbox.EToolArgs},
				{"bad base64", map[string]any{"language": "wasm", "module_base64": "!!"}, sandbox.EModuleInvalid},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					res := h.call(t, "run_code", c.args)
					e := wantCode(t, res, c.code)
					if e.Message == "" {
						t.Errorf("empty message")
					}
					r := decodeStructured[runResult](t, res)
					if r.OK || string(r.Result) != "null" || r.Logs == nil {
						t.Errorf("failed run = %+v", r)
					}
				})
			}
		})
	}
}

func TestDirectCalls(t *testing.T) {
	for _, proto := range protocols {
		t.Run("proto="+proto, func(t *testing.T) {
			h := newHarness(t, options{protocol: proto})

			res := h.call(t, "get_budget_by_level", map[string]any{"level": "L3"})
			if res.IsError {
				t.Fatalf("isError: %v", res.StructuredContent)
			}
			b := decodeStructured[map[string]any](t, res)
			if b["level"] != "L3" || b["travel_limit"] != 5000.0 || b["currency"] == nil {
				t.Fatalf("structured content = %v", b)
			}
			textJSON(t, res)

			// A non-object result is wrapped.
			res = h.call(t, "ping", map[string]any{"n": 41})
			if got := textJSON(t, res); string(got) != `{"result":42}` || res.IsError {
				t.Fatalf("ping = %s", got)
			}

			res = h.call(t, "get_budget_by_level", map[string]any{"level": "L9"})
			if res.StructuredContent != nil {
				t.Errorf("a failed direct call carries structured content %v; clients validate it against the output schema", res.StructuredContent)
			}
			e := wantCode(t, res, sandbox.EToolArgs)
			if len(e.AllowedValues) != 5 || e.AllowedValues[0] != "L1" || e.Tool != "get_budget_by_level" {
				t.Fatalf("error = %+v, want allowed_values L1..L5", e)
			}

			res = h.call(t, "get_expenses", map[string]any{"member_id": "ENG-001"})
			wantCode(t, res, sandbox.EToolArgs)
		})
	}
}

func TestProgress(t *testing.T) {
	re := regexp.MustCompile(`^(\d+) calls? done \(\d+ ok, \d+ failed(, \d+ denied)?\), (\d+) in flight, \d+\.\ds elapsed(; progress saved (once|\d+ times))?$`)
	for _, proto := range protocols {
		t.Run("proto="+proto, func(t *testing.T) {
			var (
				mu   sync.Mutex
				got  []*mcp.ProgressNotificationParams
				seen = make(chan struct{})
				once sync.Once
			)
			// gate lets the program go on only after the client has seen a
			// notification with the three pings done and the gate itself in
			// flight, so the test does not depend on timing.
			gate := &tools.Tool{Name: "gate", Description: "Waits for the test.",
				Handler: func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
					select {
					case <-seen:
						return json.RawMessage("true"), nil
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}}
			h := newHarness(t, options{protocol: proto, extra: []*tools.Tool{gate}, progress: time.Millisecond,
				client: mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					got = append(got, r.Params)
					mu.Unlock()
					if m := re.FindStringSubmatch(r.Params.Message); m != nil && m[1] == "3" && m[3] == "1" {
						once.Do(func() { close(seen) })
					}
				}}})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			params := &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
				"code": `await Promise.all([1, 2, 3].map((n) => tools.ping({n}))); progress({pinged: 3}); return await tools.gate({});`}}
			params.SetProgressToken("tok-1")
			res, err := h.cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				t.Fatalf("run: %v %v", err, res.StructuredContent)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) == 0 {
				t.Fatal("no progress notification")
			}
			last := 0.0
			for _, p := range got {
				if p.ProgressToken != "tok-1" {
					t.Errorf("token = %v", p.ProgressToken)
				}
				if !re.MatchString(p.Message) {
					t.Errorf("message %q", p.Message)
				}
				if p.Progress <= last {
					t.Errorf("progress %v after %v: not increasing", p.Progress, last)
				}
				if p.Total != 0 {
					t.Errorf("total = %v, want none (progress is elapsed milliseconds)", p.Total)
				}
				last = p.Progress
			}
			// The notification that let the gate go reported the saved
			// progress too (stored before the gate's call started).
			if m := got[len(got)-1].Message; !strings.Contains(m, "progress saved once") {
				t.Errorf("last message %q does not mention the saved progress", m)
			}
		})
	}
}

// blocker is a tool that blocks until its call is cancelled, announcing each
// start on started.
func blocker(started chan<- struct{}) *tools.Tool {
	return &tools.Tool{Name: "block", Description: "Blocks until cancelled.",
		Handler: func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}}
}

func TestCancel(t *testing.T) {
	for _, proto := range protocols {
		t.Run("proto="+proto, func(t *testing.T) {
			started := make(chan struct{}, 1)
			h := newHarness(t, options{protocol: proto, extra: []*tools.Tool{blocker(started)}})
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code",
					Arguments: map[string]any{"code": `await tools.block({}); return "not cancelled"`}})
				errc <- err
			}()
			<-started
			cancel()
			if err := <-errc; err == nil {
				t.Fatal("CallTool returned no error after cancellation")
			}
			rec := h.audit.waitRun(t)
			if rec["code"] != string(sandbox.ECancelled) {
				t.Fatalf("run ended with %v, want E_CANCELLED", rec["code"])
			}
			// The server still answers.
			if res := h.call(t, "ping", map[string]any{"n": 1}); res.IsError {
				t.Fatalf("ping after cancel: %v", res.StructuredContent)
			}
		})
	}
}

// panicky fails at the seams a bug could hit: an engine that panics, and an
// authorizer (policy) that panics.
type panicAuthorizer struct{ bindings.DefaultAuthorizer }

func (a panicAuthorizer) Authorize(ctx context.Context, c *bindings.CallInfo) bindings.Decision {
	if c.Tool.Name == "explode" {
		panic("policy bug")
	}
	return a.DefaultAuthorizer.Authorize(ctx, c)
}

func TestPanicsBecomeErrors(t *testing.T) {
	explode := &tools.Tool{Name: "explode", Description: "Its policy panics.",
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage("1"), nil }}
	crash := &tools.Tool{Name: "crash", Description: "Its handler panics.",
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { panic("tool bug") }}
	var logBuf syncBuffer
	h := newHarness(t, options{
		extra:     []*tools.Tool{explode, crash},
		auth:      panicAuthorizer{},
		exec:      func(e sandbox.Executor) sandbox.Executor { return panicExecutor{e} },
		serverLog: slog.New(slog.NewTextHandler(&logBuf, nil)),
	})

	res := h.call(t, "run_code", map[string]any{"code": `// PANIC_IN_ENGINE
return 1`})
	e := wantCode(t, res, sandbox.EInternal)
	if strings.Contains(e.Message, "engine bug") || strings.Contains(e.Message, "goroutine") {
		t.Errorf("the panic leaked to the client: %q", e.Message)
	}

	// A panicking authorizer is the broker's to recover: the call is denied.
	res = h.call(t, "explode", map[string]any{})
	wantCode(t, res, sandbox.EToolDenied)

	// A panicking tool handler is the broker's to recover: the tool failed.
	res = h.call(t, "crash", map[string]any{})
	wantCode(t, res, sandbox.EToolFailed)

	if !strings.Contains(logBuf.String(), "engine bug") || !strings.Contains(logBuf.String(), "policy bug") {
		t.Errorf("panics not logged: %s", logBuf.String())
	}
	// Still serving.
	if res := h.call(t, "run_code", map[string]any{"code": "return 7"}); res.IsError {
		t.Fatalf("after panics: %v", res.StructuredContent)
	}
}

func TestRefresh(t *testing.T) {
	changed := make(chan struct{}, 10)
	h := newHarness(t, options{protocol: "2025-06-18", client: mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}})
	// A refresh with nothing new changes nothing.
	if err := h.srv.Refresh(); err != nil {
		t.Fatal(err)
	}
	echo := &tools.Tool{Name: "echo_tool", Description: "Echoes. Returns its arguments.",
		Handler: func(_ context.Context, args json.RawMessage) (json.RawMessage, error) { return args, nil }}
	if err := h.cat.Add(echo); err != nil {
		t.Fatal(err)
	}
	if err := h.srv.Refresh(); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, changed)
	names, desc := listNames(t, h)
	if !slices.Contains(names, "echo_tool") || !strings.Contains(desc, "echo_tool(args?: {}): Promise<unknown> — Echoes.") {
		t.Fatalf("after add: tools %v, run_code description %q", names, desc)
	}
	h.cat.Remove("echo_tool")
	if err := h.srv.Refresh(); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, changed)
	names, desc = listNames(t, h)
	if slices.Contains(names, "echo_tool") || strings.Contains(desc, "echo_tool") {
		t.Fatalf("after remove: tools %v", names)
	}
}

func waitChanged(t *testing.T, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
}

func listNames(t *testing.T, h *harness) ([]string, string) {
	t.Helper()
	lt, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	desc := ""
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if tl.Name == "run_code" {
			desc = tl.Description
		}
	}
	return names, desc
}

// wireLog is a client transport that keeps the raw result of every response,
// to check bytes as the server sent them; lastResult returns the last tool
// result with structured content.
type wireLog struct {
	mcp.Transport
	mu      sync.Mutex
	results []json.RawMessage
	more    chan struct{} // receives after a result was added (buffer 1)
}

// added returns the channel that receives after a result is added; call
// with mu held.
func (w *wireLog) added() chan struct{} {
	if w.more == nil {
		w.more = make(chan struct{}, 1)
	}
	return w.more
}

func (w *wireLog) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := w.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &wireConn{Connection: c, log: w}, nil
}

type wireConn struct {
	mcp.Connection
	log *wireLog
}

func (c *wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && len(r.Result) > 0 {
		c.log.mu.Lock()
		c.log.results = append(c.log.results, bytes.Clone(r.Result))
		select {
		case c.log.added() <- struct{}{}:
		default:
		}
		c.log.mu.Unlock()
	}
	return m, err
}

func (w *wireLog) lastResult(t *testing.T) json.RawMessage {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.results) - 1; i >= 0; i-- {
		if bytes.Contains(w.results[i], []byte(`"structuredContent"`)) {
			return w.results[i]
		}
	}
	t.Fatal("no tool result seen on the wire")
	return nil
}

// auditLog is a slog.Handler collecting the broker's audit records.
type auditLog struct {
	runs  chan map[string]any
	calls chan map[string]any
}

func newAuditLog() *auditLog {
	return &auditLog{runs: make(chan map[string]any, 100), calls: make(chan map[string]any, 100)}
}

func (a *auditLog) Enabled(context.Context, slog.Level) bool { return true }
func (a *auditLog) WithAttrs([]slog.Attr) slog.Handler       { return a }
func (a *auditLog) WithGroup(string) slog.Handler            { return a }
func (a *auditLog) Handle(_ context.Context, r slog.Record) error {
	ch := a.runs
	switch r.Message {
	case "run":
	case "call":
		ch = a.calls
	default:
		return nil
	}
	m := map[string]any{}
	r.Attrs(func(at slog.Attr) bool { m[at.Key] = at.Value.Any(); return true })
	select {
	case ch <- m:
	default:
	}
	return nil
}

func (a *auditLog) waitRun(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m := <-a.runs:
		return m
	case <-time.After(30 * time.Second):
		t.Fatal("no run record in the audit log")
		return nil
	}
}

type syncBuffer = sandboxtest.Buffer
