package bindings

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
	"github.com/sandcall/sandcall/tools"
)

// TestPolicyDefaultMatchesDefaultAuthorizer: with no policy file the policy
// engine answers exactly as DefaultAuthorizer does — allow, rule, message
// and hint — for every shape of tool and both callers.
func TestPolicyDefaultMatchesDefaultAuthorizer(t *testing.T) {
	pa := NewPolicyAuthorizer(nil)
	var def DefaultAuthorizer
	for _, eff := range []tools.Effects{{}, {Destructive: true}, {ReadOnly: true, Idempotent: true}} {
		for _, ac := range [][]tools.Caller{nil, {tools.Code}, {tools.Direct}, {tools.Direct, tools.Code}} {
			tool := echo("t")
			tool.Effects, tool.AllowedCallers = eff, ac
			for _, caller := range []tools.Caller{tools.Direct, tools.Code} {
				info := &CallInfo{Caller: caller, Tool: tool, Args: json.RawMessage(`{}`), Principal: LocalPrincipal}
				got, want := pa.Authorize(context.Background(), info), def.Authorize(context.Background(), info)
				if got.Allow != want.Allow || got.Rule != want.Rule || got.Message != want.Message || got.Hint != want.Hint {
					t.Errorf("%+v %v by %s:\n policy  %+v\n default %+v", eff, ac, caller, got, want)
				}
				if g, w := pa.Exposes(tool, caller, LocalPrincipal), def.Exposes(tool, caller, LocalPrincipal); g != w {
					t.Errorf("%+v %v to %s: exposes %t, default %t", eff, ac, caller, g, w)
				}
			}
		}
	}
}

func mustPolicy(t *testing.T, src string) *policy.Checker {
	t.Helper()
	c, err := policy.Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPolicyAuthorizerThroughBroker(t *testing.T) {
	pay := echo("send_payment")
	pay.Effects.Destructive = true
	appr := echo("approve_me")
	c := mustPolicy(t, `version: 1
rules:
  - tools: [code_only]
    allowed_callers: [code]
  - name: payments
    tools: [send_payment]
    allowed_callers: [direct]
    when: 'args.amount <= 1000 && "finance" in principal.roles'
    message: payments over 1000 need a person
  - name: q
    tools: [quota]
    max_calls_per_run: 2
  - tools: [approve_me]
    require_approval: true
`)
	b := newBroker(t, BrokerConfig{Authorizer: NewPolicyAuthorizer(c)}, echo("code_only"), pay, echo("quota"), appr)
	names := func(ts []*tools.Tool) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.Name)
		}
		return strings.Join(s, ",")
	}
	if got := names(b.Exposed(tools.Direct, LocalPrincipal)); got != "approve_me,quota,send_payment" {
		t.Errorf("direct tools: %s", got)
	}
	if got := names(b.Exposed(tools.Code, LocalPrincipal)); got != "approve_me,code_only,quota" {
		t.Errorf("code tools: %s", got)
	}
	fin := Principal{ID: "alice", Roles: []string{"finance"}}
	if _, err := b.CallDirect(context.Background(), fin, "send_payment", json.RawMessage(`{"amount":10}`)); err != nil {
		t.Errorf("small payment: %v", err)
	}
	_, err := b.CallDirect(context.Background(), fin, "send_payment", json.RawMessage(`{"amount":5000}`))
	var e *sandbox.Error
	if !errors.As(err, &e) || e.Code != sandbox.EToolDenied || e.Rule != "payments" || e.Message != "payments over 1000 need a person" {
		t.Errorf("big payment: %#v", err)
	}
	if _, err := b.CallDirect(context.Background(), LocalPrincipal, "send_payment", json.RawMessage(`{"amount":10}`)); code(err) != sandbox.EToolDenied {
		t.Errorf("payment without the role: %v", err)
	}
	// Quota per run: the third call of the run is denied and counted.
	r := newRun(b, sandbox.Limits{})
	for i, want := range []sandbox.Code{"", "", sandbox.EToolDenied} {
		if _, err := r.Call(context.Background(), "quota", nil); code(err) != want {
			t.Errorf("quota call %d: %v", i, err)
		}
	}
	if s := r.snapshot(); s.Denied != 1 || s.OK != 2 {
		t.Errorf("stats %+v", s)
	}
	// require_approval with nobody to ask fails closed.
	_, err = b.CallDirect(context.Background(), LocalPrincipal, "approve_me", nil)
	if !errors.As(err, &e) || e.Code != sandbox.EToolDenied || !strings.Contains(e.Message, "approval") {
		t.Errorf("approval: %v", err)
	}
	d := NewPolicyAuthorizer(c).Authorize(context.Background(), &CallInfo{Caller: tools.Direct, Tool: appr, Principal: LocalPrincipal})
	if !d.Allow || !d.RequireApproval {
		t.Errorf("approval decision: %+v", d)
	}
}

func writeFile(t *testing.T, path, src string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a log sink safe for the watcher's goroutine.
type syncBuffer = sandboxtest.Buffer

func TestPolicyFileReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, path, "version: 1\nrules: [{name: allow-ok, tools: [ok]}]\n")
	var logs syncBuffer
	b := newBroker(t, BrokerConfig{}, echo("ok"))
	pf, err := LoadPolicyFile(path, b, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(b, sandbox.Limits{})
	if _, err := r.Call(context.Background(), "ok", nil); err != nil {
		t.Fatal(err)
	}

	// An invalid version keeps the old policy and says exactly why.
	writeFile(t, path, "version: 1\nrules:\n  - tools: [ok]\n    when: 'nope'\n")
	if swapped, err := pf.Reload(); swapped || err == nil {
		t.Fatalf("invalid reload: swapped=%t err=%v", swapped, err)
	}
	if !strings.Contains(logs.String(), path+":4:12: rules[0]: when: unknown name nope") {
		t.Errorf("log does not say why:\n%s", logs.String())
	}
	if _, err := r.Call(context.Background(), "ok", nil); err != nil {
		t.Fatalf("old policy not kept: %v", err)
	}

	// A valid version takes effect on the next call of the same run.
	writeFile(t, path, "version: 1\nrules: [{name: deny-ok, tools: [ok], allowed_callers: []}]\n")
	if swapped, err := pf.Reload(); !swapped || err != nil {
		t.Fatalf("valid reload: swapped=%t err=%v", swapped, err)
	}
	_, err = r.Call(context.Background(), "ok", nil)
	var e *sandbox.Error
	if !errors.As(err, &e) || e.Code != sandbox.EToolDenied || e.Rule != "deny-ok" {
		t.Fatalf("after swap: %v", err)
	}
	if swapped, _ := pf.Reload(); swapped {
		t.Error("unchanged file swapped again")
	}
	if _, err := LoadPolicyFile(filepath.Join(t.TempDir(), "missing.yaml"), b, nil); err == nil {
		t.Error("missing file loaded")
	}
}

// TestPolicyFileWatch runs the watcher in a synctest bubble: time is the
// bubble's, so each poll happens exactly when the test has slept one
// interval and everything else waits (synctest.Wait), on any machine load.
func TestPolicyFileWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "policy.yaml")
		writeFile(t, path, "version: 1\n")
		var logs syncBuffer
		b := newBroker(t, BrokerConfig{}, echo("ok"))
		pf, err := LoadPolicyFile(path, b, slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		const interval = 10 * time.Millisecond
		go func() { pf.Watch(ctx, interval); close(done) }()
		defer func() { cancel(); <-done }()
		poll := func() { time.Sleep(interval); synctest.Wait() }

		writeFile(t, path, "version: 1\nrules: [{name: deny-ok, tools: [ok], allowed_callers: []}]\n")
		poll()
		if _, err := b.CallDirect(context.Background(), LocalPrincipal, "ok", nil); code(err) != sandbox.EToolDenied {
			t.Fatalf("after one poll: %v, want E_TOOL_DENIED (the watcher did not swap the policy)", err)
		}
		// A broken edit is logged once and changes nothing.
		writeFile(t, path, "version: 1\nrules: [{tools: ['[']}]\n")
		for range 5 {
			poll()
		}
		if n := strings.Count(logs.String(), "bad glob"); n != 1 {
			t.Errorf("broken edit logged %d times in 5 polls, want once:\n%s", n, logs.String())
		}
		if pf.Checker() == nil || pf.Checker().Name() != path {
			t.Errorf("checker %v", pf.Checker())
		}
	})
}

// TestPolicyAuthorizerConcurrent: decisions and swaps race-free.
func TestPolicyAuthorizerConcurrent(t *testing.T) {
	c := mustPolicy(t, "version: 1\nrules: [{tools: [ok], rate: {calls: 1000000, per: 1s}, when: 'args.x == 1'}]\n")
	b := newBroker(t, BrokerConfig{Authorizer: NewPolicyAuthorizer(c)}, echo("ok"))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if _, err := b.CallDirect(context.Background(), LocalPrincipal, "ok", json.RawMessage(`{"x":1}`)); err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					b.SetAuthorizer(NewPolicyAuthorizer(c))
				}
			}
		}()
	}
	wg.Wait()
}
