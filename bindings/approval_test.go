package bindings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
	"github.com/sandcall/sandcall/tools"
)

const approvalPolicy = `version: 1
rules:
  - name: ask
    tools: [pay]
    require_approval: true
    log_args: true
  - name: quiet
    tools: [secretive]
`

// auditBuffer is a JSON audit logger writing into a buffer.
type auditBuffer struct{ sandboxtest.Buffer }

func (a *auditBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(a.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func approvalBroker(t *testing.T, cfg BrokerConfig) (*Broker, *auditBuffer) {
	t.Helper()
	c, err := policy.Parse("p.yaml", []byte(approvalPolicy))
	if err != nil {
		t.Fatal(err)
	}
	ab := &auditBuffer{}
	cfg.Authorizer = NewPolicyAuthorizer(c)
	cfg.Audit = slog.New(tools.NewRedactHandler(slog.NewJSONHandler(ab, nil)))
	return newBroker(t, cfg, echo("pay"), echo("secretive")), ab
}

func TestApproval(t *testing.T) {
	var asked []ApprovalRequest
	var mu sync.Mutex
	answer := func(ok bool, err error) Approver {
		return ApproverFunc(func(_ context.Context, r ApprovalRequest) (bool, error) {
			mu.Lock()
			asked = append(asked, r)
			mu.Unlock()
			return ok, err
		})
	}
	slow := ApproverFunc(func(ctx context.Context, _ ApprovalRequest) (bool, error) {
		<-ctx.Done()
		return false, ctx.Err()
	})
	boom := ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { panic("boom") })
	b, ab := approvalBroker(t, BrokerConfig{ApprovalTimeout: 20 * time.Millisecond})
	args := json.RawMessage(`{"amount":10,"api_key":"hunter2hunter2"}`)
	for _, tc := range []struct {
		name     string
		approver Approver
		wantErr  bool
		hint     string
		decision string
	}{
		{"approve", answer(true, nil), false, "", "approved"},
		{"decline", answer(false, nil), true, "Do not retry", "declined"},
		{"error", answer(false, errors.New("transport closed")), true, "Try again", "declined"},
		{"unsupported", answer(false, ErrApprovalUnsupported), true, "does not support elicitation", "declined"},
		{"timeout", slow, true, "watch for the approval prompt", "approval_timeout"},
		{"panic", boom, true, "Try again", "declined"},
		{"nobody", nil, true, "supports elicitation", "declined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.Direct(context.Background(), DirectCall{Principal: Principal{ID: "alice"}, Tool: "pay", Args: args, Approver: tc.approver})
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
			} else {
				var e *sandbox.Error
				if !errors.As(err, &e) || e.Code != sandbox.EToolDenied || e.Rule != "ask" || !strings.Contains(e.Hint, tc.hint) {
					t.Fatalf("err = %#v", err)
				}
			}
			recs := ab.records(t)
			if got := recs[len(recs)-1]["decision"]; got != tc.decision {
				t.Errorf("audit decision = %v, want %s", got, tc.decision)
			}
		})
	}
	if len(asked) == 0 {
		t.Fatal("nobody was asked")
	}
	r := asked[0]
	if r.Tool != "pay" || r.Caller != "direct" || r.Principal.ID != "alice" || r.Rule != "ask" ||
		strings.Contains(r.ArgsSummary, "hunter2") || !strings.Contains(r.ArgsSummary, `amount: 10`) ||
		!strings.Contains(r.Message, "pay") {
		t.Errorf("request %+v", r)
	}
}

func TestApprovalSummaryBounded(t *testing.T) {
	big := json.RawMessage(`{"s":"` + strings.Repeat("é", 5000) + `"}`)
	if s := argsSummary(big); len(s) > MaxArgsSummaryBytes+100 || !strings.HasSuffix(s, "(cut: 1023 of 10002 bytes shown)") {
		t.Errorf("summary %d bytes: …%s", len(s), s[max(0, len(s)-60):])
	}
	// Thousands of arguments: the first 100 are named, the rest counted.
	var many strings.Builder
	many.WriteString("{")
	for i := range 5000 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `"a%d":"%s"`, i, strings.Repeat("v", 40))
	}
	many.WriteString("}")
	if s := argsSummary(json.RawMessage(many.String())); len(s) > 8*MaxArgsSummaryBytes || !strings.Contains(s, "and 4900 more arguments") {
		t.Errorf("summary of 5000 arguments: %d bytes, ends %q", len(s), s[max(0, len(s)-80):])
	}
}

func TestApprovalInRun(t *testing.T) {
	b, _ := approvalBroker(t, BrokerConfig{})
	r := newRun(b, sandbox.Limits{})
	r.approver = ApproverFunc(func(_ context.Context, req ApprovalRequest) (bool, error) {
		return req.Caller == "code" && req.RunID == "run_test", nil
	})
	if _, err := r.Call(context.Background(), "pay", nil); err != nil {
		t.Fatal(err)
	}
	r.approver = ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return false, nil })
	if _, err := r.Call(context.Background(), "pay", nil); code(err) != sandbox.EToolDenied {
		t.Fatal(err)
	}
	if s := r.snapshot(); s.OK != 1 || s.Denied != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestAuditArgs: arguments are hashed unless log_args; a canary secret
// never appears when they are hashed, and is redacted when logged.
func TestAuditArgs(t *testing.T) {
	b, ab := approvalBroker(t, BrokerConfig{})
	yes := ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return true, nil })
	canary := "canary-7f3a9b"
	shaped := "sk-" + strings.Repeat("A1b2", 6)
	args := json.RawMessage(`{"note":"` + canary + `","key":"` + shaped + `","password":"p4ss"}`)
	if _, err := b.Direct(context.Background(), DirectCall{Principal: LocalPrincipal, Tool: "secretive", Args: args}); err != nil {
		t.Fatal(err)
	}
	out := ab.String()
	if strings.Contains(out, canary) || strings.Contains(out, shaped) || strings.Contains(out, "p4ss") {
		t.Fatalf("hashed args leaked: %s", out)
	}
	recs := ab.records(t)
	if _, ok := recs[0]["args"]; ok || recs[0]["args_sha256"] == "" {
		t.Errorf("record %v", recs[0])
	}
	for _, k := range []string{"time", "run_id", "seq", "caller", "principal", "tool", "decision", "rule", "code", "duration_ms", "args_sha256", "result_bytes", "tier"} {
		if _, ok := recs[0][k]; !ok {
			t.Errorf("record has no %s: %v", k, recs[0])
		}
	}
	if _, err := b.Direct(context.Background(), DirectCall{Principal: LocalPrincipal, Tool: "pay", Args: args, Approver: yes}); err != nil {
		t.Fatal(err)
	}
	recs = ab.records(t)
	logged, _ := recs[1]["args"].(string)
	if !strings.Contains(logged, canary) || strings.Contains(logged, shaped) || strings.Contains(logged, "p4ss") ||
		!strings.Contains(logged, tools.Redacted) {
		t.Errorf("logged args %q", logged)
	}
}

type countObserver struct {
	mu    sync.Mutex
	calls []string
	runs  []string
}

func (o *countObserver) ObserveCall(tool, caller, outcome string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, tool+"/"+caller+"/"+outcome)
}

func (o *countObserver) ObserveRun(outcome, code string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.runs = append(o.runs, outcome+"/"+code)
}

func TestObserver(t *testing.T) {
	o := &countObserver{}
	b, _ := approvalBroker(t, BrokerConfig{Observer: o})
	_, _ = b.CallDirect(context.Background(), LocalPrincipal, "secretive", nil)
	_, _ = b.CallDirect(context.Background(), LocalPrincipal, "pay", nil)
	_, _ = b.CallDirect(context.Background(), LocalPrincipal, "no such tool", nil)
	if got := strings.Join(o.calls, ","); got != "secretive/direct/ok,pay/direct/denied,(unknown)/direct/failed" {
		t.Errorf("observed %s", got)
	}
	_ = tools.Direct
}

// BenchmarkBrokerCall is one call through the whole broker path (lookup,
// validation, decision, budgets, dispatch, audit disabled) under the
// default policy and under a compiled policy file with a `when`.
func BenchmarkBrokerCall(b *testing.B) {
	c, err := policy.Parse("p.yaml", []byte(`version: 1
rules:
  - name: r
    tools: [ok]
    allowed_callers: [code]
    when: 'args.x < 100 && run.calls_by_tool[tool] < 1000000000'
`))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		a    Authorizer
	}{{"default", nil}, {"policy", NewPolicyAuthorizer(c)}} {
		b.Run(tc.name, func(b *testing.B) {
			cat, _ := tools.NewCatalog(echo("ok"))
			br, _ := NewBroker(BrokerConfig{Catalog: cat, Authorizer: tc.a})
			r := newRun(br, sandbox.Limits{MaxCalls: 1 << 30})
			args := json.RawMessage(`{"x":1}`)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Call(ctx, "ok", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
