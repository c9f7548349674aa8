package bindings

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// counter is a side-effecting tool that counts the calls it served.
func counter(name string, n *atomic.Int64) *tools.Tool {
	return &tools.Tool{Name: name, Description: "Counts its calls.", InputSchema: open,
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(fmt.Sprintf(`{"call":%d}`, n.Add(1))), nil
		}}
}

// replayProgram calls count, then pay (which needs an approval) with a
// random number in its arguments, then count again with the time.
const replayProgram = `const a = await tools.count({n: 1});
	const p = await tools.pay({amount: 5, r: Math.random()});
	const b = await tools.count({n: 2, at: Date.now()});
	return [a.call, p.amount, b.call]`

func replayRunner(t *testing.T) (*Runner, *atomic.Int64, *atomic.Int64) {
	t.Helper()
	var counts, pays atomic.Int64
	b, _ := approvalBroker(t, BrokerConfig{})
	pay := counter("pay", &pays)
	pay.Handler = func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		pays.Add(1)
		return args, nil
	}
	c, err := tools.NewCatalog(counter("count", &counts), pay)
	if err != nil {
		t.Fatal(err)
	}
	b.cfg.Catalog = c
	r, err := NewRunner(RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	return r, &counts, &pays
}

// TestSuspendReplay: a run that needs an approval suspends with the log of
// its completed calls; replayed with the approval, each side effect
// happens exactly once and the run completes; declined, the call is
// denied and nothing is made again.
func TestSuspendReplay(t *testing.T) {
	for _, approved := range []bool{true, false} {
		r, counts, pays := replayRunner(t)
		req := RunRequest{Program: sandbox.Program{Source: replayProgram}, Suspend: true,
			Seed: 7, Clock: time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)}
		res, susp := r.RunResumable(context.Background(), req)
		if susp == nil {
			t.Fatalf("no suspension: %+v", res)
		}
		if counts.Load() != 1 || pays.Load() != 0 {
			t.Fatalf("before the approval: %d counts, %d pays", counts.Load(), pays.Load())
		}
		if len(susp.Log) != 1 || susp.Log[0].Tool != "count" || string(susp.Log[0].Result) != `{"call":1}` ||
			susp.Pending.Tool != "pay" || !strings.Contains(susp.Request.Message, "pay") {
			t.Fatalf("suspension %+v", susp)
		}
		req.Replay = &Replay{Log: susp.Log, Pending: susp.Pending, Approved: approved}
		res, susp2 := r.RunResumable(context.Background(), req)
		if susp2 != nil {
			t.Fatalf("suspended again: %+v", susp2)
		}
		if approved {
			if !res.OK || string(res.Result) != `[1,5,2]` {
				t.Fatalf("approved: %+v %s", res.Error, res.Result)
			}
			if counts.Load() != 2 || pays.Load() != 1 {
				t.Errorf("approved: %d counts, %d pays; want 2 and 1", counts.Load(), pays.Load())
			}
		} else {
			if res.OK || res.Error.Code != sandbox.EToolDenied || !strings.Contains(res.Error.Message, "declined") {
				t.Fatalf("declined: %+v", res.Error)
			}
			if counts.Load() != 1 || pays.Load() != 0 {
				t.Errorf("declined: %d counts, %d pays; want 1 and 0", counts.Load(), pays.Load())
			}
		}
	}
}

// TestReplayDiverges: a replay that makes a call its log does not hold
// before reaching the pending call is denied, and nothing is made twice.
func TestReplayDiverges(t *testing.T) {
	r, counts, pays := replayRunner(t)
	req := RunRequest{Program: sandbox.Program{Source: replayProgram}, Suspend: true, Seed: 7,
		Clock: time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)}
	_, susp := r.RunResumable(context.Background(), req)
	if susp == nil {
		t.Fatal("no suspension")
	}
	// Another program: its first call is not the logged one.
	req.Program.Source = `await tools.count({n: 99}); return await tools.pay({amount: 5})`
	req.Replay = &Replay{Log: susp.Log, Pending: susp.Pending, Approved: true}
	res, _ := r.RunResumable(context.Background(), req)
	if res.OK || res.Error.Code != sandbox.EToolDenied || !strings.Contains(res.Error.Message, "diverged") {
		t.Fatalf("diverged run: %+v", res.Error)
	}
	// Another seed: pay's arguments differ, so the call at the pending
	// call's place is not the pending call: a divergence too, and the
	// person's answer is not applied to it.
	req.Program.Source = replayProgram
	req.Seed = 8
	res, susp = r.RunResumable(context.Background(), req)
	if susp != nil || res.OK || res.Error.Code != sandbox.EToolDenied || !strings.Contains(res.Error.Message, "diverged") {
		t.Fatalf("other seed: %+v %+v", res.Error, susp)
	}
	if counts.Load() != 1 || pays.Load() != 0 {
		t.Errorf("%d counts, %d pays; want 1 and 0", counts.Load(), pays.Load())
	}
}

// TestSuspendWaitsForCallsInFlight: a call in flight when another needs an
// approval finishes and is logged (never cancelled: its side effect may
// have happened), so the replay answers it from the log. Whichever of the
// two reaches the broker first, count is made once.
func TestSuspendWaitsForCallsInFlight(t *testing.T) {
	r, counts, pays := replayRunner(t)
	release := make(chan struct{})
	var once sync.Once
	slow := counter("count", counts)
	inner := slow.Handler
	slow.Handler = func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		select {
		case <-release: // both calls are in flight
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return inner(ctx, args)
	}
	if err := r.broker.cfg.Catalog.Replace([]string{"count"}, []*tools.Tool{slow}); err != nil {
		t.Fatal(err)
	}
	src := `const [a, p] = await Promise.all([tools.count({n: 1}), tools.pay({amount: 5})]);
		return [a.call, p.amount]`
	req := RunRequest{Program: sandbox.Program{Source: src}, Suspend: true, Seed: 1,
		Progress: func(p RunProgress) {
			if p.InFlight == 2 {
				once.Do(func() { close(release) })
			}
		}}
	_, susp := r.RunResumable(context.Background(), req)
	// count is in the log if it reached the broker before the run ended
	// (the usual case); if it did not, it never ran.
	if susp == nil || len(susp.Log) > 1 || (len(susp.Log) == 1 && string(susp.Log[0].Result) != `{"call":1}`) ||
		counts.Load() != int64(len(susp.Log)) {
		t.Fatalf("suspension %+v, %d counts", susp, counts.Load())
	}
	once.Do(func() { close(release) }) // the replay needs no gate
	req.Replay = &Replay{Log: susp.Log, Pending: susp.Pending, Approved: true}
	res, _ := r.RunResumable(context.Background(), req)
	if !res.OK || string(res.Result) != `[1,5]` || counts.Load() != 1 || pays.Load() != 1 {
		t.Fatalf("%+v %s: %d counts, %d pays", res.Error, res.Result, counts.Load(), pays.Load())
	}
}

// BenchmarkApprovalRoundTrip compares one run asked about through an
// Approver (a session) with the same run suspended and resumed by replay
// (no session): the replay's extra cost is the program's second run.
func BenchmarkApprovalRoundTrip(b *testing.B) {
	var counts, pays atomic.Int64
	br := newBrokerTB(b, BrokerConfig{Authorizer: benchApprovalPolicy(b)}, counter("count", &counts), counter("pay", &pays))
	r, err := NewRunner(RunnerConfig{Broker: br, Executor: js.New(js.Config{})})
	if err != nil {
		b.Fatal(err)
	}
	src := sandbox.Program{Source: replayProgram}
	clock := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)
	b.Run("session", func(b *testing.B) {
		yes := ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return true, nil })
		for b.Loop() {
			if res := r.Run(context.Background(), RunRequest{Program: src, Approver: yes}); !res.OK {
				b.Fatal(res.Error)
			}
		}
	})
	b.Run("replay", func(b *testing.B) {
		for b.Loop() {
			req := RunRequest{Program: src, Suspend: true, Seed: 3, Clock: clock}
			_, susp := r.RunResumable(context.Background(), req)
			req.Replay = &Replay{Log: susp.Log, Pending: susp.Pending, Approved: true}
			if res, _ := r.RunResumable(context.Background(), req); !res.OK {
				b.Fatal(res.Error)
			}
		}
	})
}

func benchApprovalPolicy(b *testing.B) Authorizer {
	c, err := policy.Parse("p.yaml", []byte(approvalPolicy))
	if err != nil {
		b.Fatal(err)
	}
	return NewPolicyAuthorizer(c)
}

// TestDispatchAfterSuspensionIsNotMade: once a suspension has ended the run
// (no call was inside), a call that reaches dispatch is not made, even
// when the cancellation has not reached its context yet (through a context
// of another type Go propagates it on a goroutine): it would otherwise be
// logged as cancelled and the replay would answer it with that error.
func TestDispatchAfterSuspensionIsNotMade(t *testing.T) {
	runCtx, cancel := context.WithCancel(context.Background())
	s := newReplayState(nil, true, cancel)
	s.enter() // the call that needs an approval
	suspended := make(chan struct{})
	go func() {
		defer close(suspended)
		_ = s.suspendAt(runCtx, 1, "pay", json.RawMessage(`{}`), ApprovalRequest{})
		s.leave()
	}()
	<-runCtx.Done() // the run ended: no call was inside
	s.enter()
	made := false
	_, e := s.dispatch(context.Background(), 2, "count", json.RawMessage(`{}`), func() (json.RawMessage, *sandbox.Error) {
		made = true
		return json.RawMessage(`1`), nil
	})
	s.leave()
	<-suspended
	if made || e == nil || e.Code != sandbox.ECancelled {
		t.Fatalf("made %v, error %v: want the call not made, E_CANCELLED", made, e)
	}
	if susp := s.suspension(); susp == nil || len(susp.Log) != 0 {
		t.Fatalf("suspension %+v: want one with an empty log", susp)
	}
}
