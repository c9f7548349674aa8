package bindings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// open accepts any arguments object.
var open = &jsonschema.Schema{Type: "object"}

func echo(name string) *tools.Tool {
	return &tools.Tool{Name: name, Description: "Echoes its arguments.", InputSchema: open,
		Handler: func(_ context.Context, args json.RawMessage) (json.RawMessage, error) { return args, nil }}
}

func newBroker(t *testing.T, cfg BrokerConfig, ts ...*tools.Tool) *Broker {
	t.Helper()
	c, err := tools.NewCatalog(ts...)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Catalog = c
	b, err := NewBroker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newRun(b *Broker, lim sandbox.Limits) *run {
	r := &run{b: b, id: "run_test", principal: LocalPrincipal, caller: tools.Code, limits: lim.Resolve(), start: time.Now()}
	r.init()
	return r
}

func code(err error) sandbox.Code {
	var e *sandbox.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestCallErrors(t *testing.T) {
	level := &jsonschema.Schema{Type: "object", Required: []string{"level"},
		Properties:           map[string]*jsonschema.Schema{"level": {Type: "string", Enum: []any{"L1", "L2"}}},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	codeOnly := echo("code_only")
	codeOnly.AllowedCallers = []tools.Caller{tools.Code}
	directOnly := echo("direct_only")
	directOnly.AllowedCallers = []tools.Caller{tools.Direct}
	destructive := echo("delete_thing")
	destructive.Effects.Destructive = true
	withSchema := echo("budget")
	withSchema.InputSchema = level
	panicky := echo("panicky")
	panicky.Handler = func(context.Context, json.RawMessage) (json.RawMessage, error) { panic("boom /etc/secret") }
	bare := echo("bare")
	bare.Handler = func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("open /home/op/.token: permission denied")
	}
	big := echo("big")
	big.OutputBudget = 10
	b := newBroker(t, BrokerConfig{}, echo("ok"), codeOnly, directOnly, destructive, withSchema, panicky, bare, big)

	tests := []struct {
		name, tool, args string
		caller           tools.Caller
		want             sandbox.Code
	}{
		{"ok", "ok", `{"a":1}`, tools.Code, ""},
		{"unknown", "../admin/delete", `{}`, tools.Code, sandbox.EToolUnknown},
		{"bad enum", "budget", `{"level":"L9"}`, tools.Code, sandbox.EToolArgs},
		{"code to direct-only", "direct_only", `{}`, tools.Code, sandbox.EToolDenied},
		{"direct to code-only", "code_only", `{}`, tools.Direct, sandbox.EToolDenied},
		{"destructive from code by default", "delete_thing", `{}`, tools.Code, sandbox.EToolDenied},
		{"destructive direct", "delete_thing", `{}`, tools.Direct, ""},
		{"panic", "panicky", `{}`, tools.Code, sandbox.EToolFailed},
		{"bare error", "bare", `{}`, tools.Code, sandbox.EToolFailed},
		{"output budget", "big", `{"aaaaaaaaaaaaaa":1}`, tools.Code, sandbox.EOutputLimit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRun(b, sandbox.Limits{})
			r.caller = tc.caller
			_, err := r.Call(context.Background(), tc.tool, json.RawMessage(tc.args))
			if got := code(err); got != tc.want {
				t.Fatalf("code = %q, want %q (err %v)", got, tc.want, err)
			}
			if err != nil {
				msg := err.Error()
				for _, leak := range []string{"/etc/secret", "/home/op", "goroutine"} {
					if strings.Contains(msg, leak) {
						t.Errorf("error leaks %q: %s", leak, msg)
					}
				}
			}
			s := r.snapshot()
			if s.Total != 1 {
				t.Errorf("total = %d, want 1", s.Total)
			}
			switch tc.want {
			case "":
				if s.OK != 1 {
					t.Errorf("ok = %d, want 1", s.OK)
				}
			case sandbox.EToolDenied:
				if s.Denied != 1 {
					t.Errorf("denied = %d, want 1", s.Denied)
				}
			default:
				if s.Failed != 1 {
					t.Errorf("failed = %d, want 1", s.Failed)
				}
			}
			if tc.want == sandbox.EToolUnknown && len(s.ByTool) != 0 {
				t.Errorf("unknown tool name counted in by_tool: %v", s.ByTool)
			}
		})
	}
}

func TestDeniedErrorNamesRule(t *testing.T) {
	d := echo("direct_only")
	d.AllowedCallers = []tools.Caller{tools.Direct}
	b := newBroker(t, BrokerConfig{}, d)
	_, err := newRun(b, sandbox.Limits{}).Call(context.Background(), "direct_only", nil)
	var e *sandbox.Error
	if !errors.As(err, &e) || e.Rule == "" || e.Hint == "" || e.Tool != "direct_only" {
		t.Fatalf("denial = %#v, want rule, hint and tool", e)
	}
	if !errors.Is(err, sandbox.ErrToolDenied) {
		t.Fatal("errors.Is(err, ErrToolDenied) = false")
	}
}

func TestCallLimit(t *testing.T) {
	b := newBroker(t, BrokerConfig{}, echo("ok"))
	r := newRun(b, sandbox.Limits{MaxCalls: 3})
	for i := 0; i < 3; i++ {
		if _, err := r.Call(context.Background(), "ok", nil); err != nil {
			t.Fatal(err)
		}
	}
	_, err := r.Call(context.Background(), "ok", nil)
	if code(err) != sandbox.EToolCallLimit {
		t.Fatalf("4th call: %v, want E_TOOL_CALL_LIMIT", err)
	}
}

// TestInFlightCap checks that no more than MaxInFlight handlers run at once
// and that every call still completes.
func TestInFlightCap(t *testing.T) { synctest.Test(t, testInFlightCap) }

// testInFlightCap runs in a synctest bubble: the handler's 2 ms of work are
// the bubble's time, so handlers overlap the same way on any machine.
func testInFlightCap(t *testing.T) {
	var cur, peak atomic.Int32
	slow := echo("slow")
	slow.Handler = func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
		cur.Add(-1)
		return args, nil
	}
	b := newBroker(t, BrokerConfig{}, slow)
	r := newRun(b, sandbox.Limits{MaxInFlight: 3})
	var wg sync.WaitGroup
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.Call(context.Background(), "slow", nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > 3 || p < 1 {
		t.Fatalf("peak concurrency = %d, want 1..3", p)
	}
	if s := r.snapshot(); s.OK != 30 || s.ByTool["slow"] != 30 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestCancelWhileWaitingForSlot(t *testing.T) {
	block := make(chan struct{})
	entered := make(chan struct{}, 1)
	slow := echo("slow")
	slow.Handler = func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		entered <- struct{}{}
		select {
		case <-block:
		case <-ctx.Done():
		}
		return args, nil
	}
	b := newBroker(t, BrokerConfig{}, slow)
	r := newRun(b, sandbox.Limits{MaxInFlight: 1})
	ctx, cancel := context.WithCancel(context.Background())
	go r.Call(ctx, "slow", nil) //nolint:errcheck // holds the only slot
	<-entered                   // it does
	errc := make(chan error, 1)
	go func() { _, err := r.Call(ctx, "slow", nil); errc <- err }()
	cancel()
	if err := <-errc; code(err) != sandbox.ECancelled {
		t.Fatalf("waiting call: %v, want E_CANCELLED", err)
	}
	close(block)
}

func TestAuditRecords(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	audit := slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, nil))
	b := newBroker(t, BrokerConfig{Audit: audit}, echo("ok"))
	r := newRun(b, sandbox.Limits{})
	secret := `{"password":"hunter2"}`
	if _, err := r.Call(context.Background(), "ok", json.RawMessage(secret)); err != nil {
		t.Fatal(err)
	}
	_, _ = r.Call(context.Background(), "nope", nil)
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if strings.Contains(out, "hunter2") {
		t.Fatalf("audit stores arguments in clear: %s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d audit records, want 2:\n%s", len(lines), out)
	}
	for i, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"time", "run_id", "seq", "caller", "principal", "tool", "decision", "rule", "code", "duration_ms", "args_sha256", "result_bytes"} {
			if _, ok := rec[k]; !ok {
				t.Errorf("record %d lacks %q: %s", i, k, l)
			}
		}
	}
	if !strings.Contains(lines[1], `"code":"E_TOOL_UNKNOWN"`) || !strings.Contains(lines[0], `"decision":"allow"`) {
		t.Errorf("unexpected records:\n%s", out)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// denyAll denies every call; it shows that the broker asks the authorizer at
// dispatch, so a swap takes effect on the very next call.
type denyAll struct{}

func (denyAll) Authorize(context.Context, *CallInfo) Decision {
	return Decision{Rule: "deny_all", Message: "nothing is allowed"}
}
func (denyAll) Exposes(*tools.Tool, tools.Caller, Principal) bool { return false }

// panicky denies nothing but panics: the broker must turn that into a
// denial, never a crash (the call runs on a goroutine nobody recovers).
type panicky struct{ DefaultAuthorizer }

func (panicky) Authorize(context.Context, *CallInfo) Decision { panic("policy bug") }

func TestAuthorizerPanicDenies(t *testing.T) {
	b := newBroker(t, BrokerConfig{Authorizer: panicky{}}, echo("ok"))
	done := make(chan error, 1)
	go func() { // as an engine does: nobody above recovers
		_, err := newRun(b, sandbox.Limits{}).Call(context.Background(), "ok", nil)
		done <- err
	}()
	err := <-done
	var e *sandbox.Error
	if !errors.As(err, &e) || e.Code != sandbox.EToolDenied || e.Rule != "authorizer.panic" {
		t.Fatalf("err = %v, want E_TOOL_DENIED by authorizer.panic", err)
	}
}

func TestSetAuthorizerTakesEffectOnNextCall(t *testing.T) {
	b := newBroker(t, BrokerConfig{}, echo("ok"))
	r := newRun(b, sandbox.Limits{})
	if _, err := r.Call(context.Background(), "ok", nil); err != nil {
		t.Fatal(err)
	}
	b.SetAuthorizer(denyAll{})
	_, err := r.Call(context.Background(), "ok", nil)
	var e *sandbox.Error
	if !errors.As(err, &e) || e.Code != sandbox.EToolDenied || e.Rule != "deny_all" {
		t.Fatalf("after swap: %v", err)
	}
	if got := b.Exposed(tools.Code, LocalPrincipal); len(got) != 0 {
		t.Fatalf("Exposed after deny-all = %d tools", len(got))
	}
}

func TestCallDirect(t *testing.T) {
	c := echo("code_only")
	c.AllowedCallers = []tools.Caller{tools.Code}
	b := newBroker(t, BrokerConfig{}, echo("ok"), c)
	res, err := b.CallDirect(context.Background(), LocalPrincipal, "ok", json.RawMessage(`{"x":1}`))
	if err != nil || string(res) != `{"x":1}` {
		t.Fatalf("CallDirect = %s, %v", res, err)
	}
	if _, err := b.CallDirect(context.Background(), LocalPrincipal, "code_only", nil); code(err) != sandbox.EToolDenied {
		t.Fatalf("direct call of code-only tool: %v", err)
	}
	names := func(ts []*tools.Tool) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.Name)
		}
		return fmt.Sprint(s)
	}
	if got := names(b.Exposed(tools.Direct, LocalPrincipal)); got != "[ok]" {
		t.Errorf("direct tools = %s", got)
	}
	if got := names(b.Exposed(tools.Code, LocalPrincipal)); got != "[code_only ok]" {
		t.Errorf("code tools = %s", got)
	}
}

func BenchmarkCall(b *testing.B) {
	ping := echo("ping")
	c, _ := tools.NewCatalog(ping)
	br, _ := NewBroker(BrokerConfig{Catalog: c})
	r := newRun(br, sandbox.Limits{MaxCalls: 1 << 30})
	args := json.RawMessage(`{"n":1}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Call(ctx, "ping", args); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAuditCapsGuestNames: a name a guest made up reaches the audit trail
// capped and cleaned, however the call ends (here: over the call limit).
func TestAuditCapsGuestNames(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	b := newBroker(t, BrokerConfig{Audit: slog.New(slog.NewJSONHandler(&lockedWriter{w: &buf, mu: &mu}, nil))}, echo("ok"))
	r := newRun(b, sandbox.Limits{MaxCalls: 1})
	if _, err := r.Call(context.Background(), "ok", nil); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 100000) + "\x1b[2J"
	if _, err := r.Call(context.Background(), long, nil); code(err) != sandbox.EToolCallLimit {
		t.Fatalf("err = %v, want E_TOOL_CALL_LIMIT", err)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if len(out) > 4096 || strings.Contains(out, "\\u001b") {
		t.Fatalf("audit record holds the guest's name uncapped or uncleaned (%d bytes)", len(out))
	}
}

func TestCallInfoFrom(t *testing.T) {
	if _, ok := CallInfoFrom(context.Background()); ok {
		t.Fatal("CallInfoFrom found a CallInfo outside a broker call")
	}
	var got []*CallInfo
	var mu sync.Mutex
	who := echo("who")
	who.Handler = func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		info, ok := CallInfoFrom(ctx)
		if !ok {
			return nil, errors.New("no CallInfo in the handler's context")
		}
		mu.Lock()
		got = append(got, info)
		mu.Unlock()
		return args, nil
	}
	b := newBroker(t, BrokerConfig{}, who)
	r := newRun(b, sandbox.Limits{})
	if _, err := r.Call(context.Background(), "who", json.RawMessage(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	alice := Principal{ID: "alice"}
	if _, err := b.CallDirect(context.Background(), alice, "who", nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("handler saw %d CallInfos, want 2", len(got))
	}
	if g := got[0]; g.Caller != tools.Code || g.RunID != "run_test" || g.Seq != 1 || g.Tool.Name != "who" || string(g.Args) != `{"a":1}` {
		t.Errorf("code call: CallInfo = %+v", g)
	}
	if g := got[1]; g.Caller != tools.Direct || g.Principal.ID != "alice" {
		t.Errorf("direct call: CallInfo = %+v", g)
	}
}
