package bindings

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// LoggedCall is one tool call of a resumable run: the tool, its arguments
// (compact JSON, handles resolved) and, once it completed, its result or
// its error.
type LoggedCall struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *sandbox.Error  `json:"error,omitempty"`
}

// Suspension is a run that stopped at a call needing a person's approval
// (RunRequest.Suspend): the calls it completed and the pending one, for
// the caller to keep (sealed) and to resume with a Replay once the person
// answered.
type Suspension struct {
	// Log holds the calls the run completed, in the order they completed.
	Log []LoggedCall
	// Pending is the call that waits for the approval (no result).
	Pending LoggedCall
	// Request is what to ask the person.
	Request ApprovalRequest
	// RunID is the run that suspended (empty for a direct call): a replay
	// names it in Replay.From, and its audit record as resumed_from.
	RunID string
}

// Replay resumes a suspended run (RunRequest.Replay). The program runs
// again from the start, with the same Seed and Clock: each call found in
// Log (same tool, same arguments) is answered from it and not made again;
// the Pending call proceeds if Approved and is denied otherwise; a call
// made before the pending one that is in neither is a divergence, denied
// with E_TOOL_DENIED, so that nothing is done twice. Calls after the
// pending one run as usual.
type Replay struct {
	Log      []LoggedCall
	Pending  LoggedCall
	Approved bool
	// From is the run that suspended (Suspension.RunID), for the audit.
	From string
}

// replayState is a resumable run's record (run.rp): the log it answers
// from, the log it writes and the suspension it may end in.
type replayState struct {
	suspend bool               // a call needing approval suspends the run
	cancel  context.CancelFunc // ends the run once suspended and idle

	mu       sync.Mutex
	from     []LoggedCall // the replay's log
	used     []bool
	pending  *LoggedCall // the replay's pending call
	approved bool
	reached  bool         // the pending call was made (or there is none)
	done     []LoggedCall // calls completed in this attempt, replayed ones included
	active   int          // calls being dispatched
	susp     *Suspension
	// ended: the run was suspended and ended (cancel called). A call
	// dispatched after that is not made, even before the cancellation
	// reaches its context (through a context of another type, Go
	// propagates it on a goroutine of its own).
	ended bool
}

func newReplayState(rp *Replay, suspend bool, cancel context.CancelFunc) *replayState {
	s := &replayState{suspend: suspend, cancel: cancel, reached: true}
	if rp != nil {
		s.from = rp.Log
		s.used = make([]bool, len(rp.Log))
		p := rp.Pending
		s.pending, s.approved, s.reached = &p, rp.Approved, false
	}
	return s
}

func sameCall(c *LoggedCall, tool string, args json.RawMessage) bool {
	if c.Tool != tool {
		return false
	}
	var a, b bytes.Buffer
	if json.Compact(&a, c.Args) != nil || json.Compact(&b, args) != nil {
		return bytes.Equal(c.Args, args)
	}
	return bytes.Equal(a.Bytes(), b.Bytes())
}

// answer returns the logged outcome of a call made before, if there is an
// unused one, and records it in this attempt's log.
func (s *replayState) answer(tool string, args json.RawMessage) (json.RawMessage, *sandbox.Error, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.from {
		if !s.used[i] && sameCall(&s.from[i], tool, args) {
			s.used[i] = true
			s.done = append(s.done, s.from[i])
			return s.from[i].Result, s.from[i].Error, true
		}
	}
	return nil, nil, false
}

// diverged reports a call that the replay must not make: made before the
// pending call was reached, it is in no log entry, while an unused entry
// of the same tool is (the program now calls the tool differently: the
// same logical call with other arguments, which would do the effect twice).
// A call of a tool the log does not wait for is new: the first attempt
// never made it (every call it started is logged), so making it repeats
// nothing. Calls that need an approval are not divergences: the first
// attempt asked about one of them at a time.
func (s *replayState) diverged(tool string) *sandbox.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reached {
		return nil
	}
	waiting := false
	for i := range s.from {
		if !s.used[i] && s.from[i].Tool == tool {
			waiting = true
			break
		}
	}
	if !waiting {
		return nil
	}
	return &sandbox.Error{Code: sandbox.EToolDenied, Tool: tool,
		Message: sandbox.Cap(fmt.Sprintf("the resumed run diverged from the run that asked for approval: it called %s with other arguments than that run did before the approval (a program that depends on something other than its input and tool results takes another path when replayed)", tool), sandbox.MaxMessageBytes),
		Hint:    "Run the program again as a new run_code call (without the request state); make what it calls depend only on its input and tool results."}
}

// resolvePending answers whether the call is the pending one of the
// replay, and if so whether it was approved.
func (s *replayState) resolvePending(tool string, args json.RawMessage) (isPending, approved bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reached || s.pending == nil || !sameCall(s.pending, tool, args) {
		return false, false
	}
	s.reached = true
	return true, s.approved
}

// suspendAt makes the run's first call that needs an approval its pending
// call, lets the other calls in the broker finish (they are logged), then
// ends the run. It returns once ctx ends: the call is never made in this
// attempt.
func (s *replayState) suspendAt(ctx context.Context, tool string, args json.RawMessage, req ApprovalRequest) *sandbox.Error {
	s.mu.Lock()
	if s.susp == nil {
		s.susp = &Suspension{Pending: LoggedCall{Tool: tool, Args: bytes.Clone(args)}, Request: req}
	}
	s.active-- // this call waits: it does not hold the run up
	if s.active == 0 {
		s.ended = true
		s.cancel()
	}
	s.mu.Unlock()
	<-ctx.Done()
	s.mu.Lock()
	s.active++ // balanced by the call's leave
	s.mu.Unlock()
	return sandbox.Errorf(sandbox.ECancelled, "", "the run waits for a person's approval")
}

// enter and leave bracket each call in the broker: a suspended run ends
// only once no call is inside, so that every call that may have had an
// effect is in the log. A call the engine had not yet handed to the broker
// never ran; a replay makes it for real.
func (s *replayState) enter() {
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
}

func (s *replayState) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.susp != nil && s.active == 0 {
		s.ended = true
		s.cancel()
	}
}

// dispatch makes a call and logs its outcome. A call that reaches it
// after the run was suspended and ended is not made (nor logged).
func (s *replayState) dispatch(ctx context.Context, tool string, args json.RawMessage, call func() (json.RawMessage, *sandbox.Error)) (json.RawMessage, *sandbox.Error) {
	s.mu.Lock()
	ended := s.ended
	s.mu.Unlock()
	if ended || ctx.Err() != nil {
		return nil, sandbox.Errorf(sandbox.ECancelled, "", "the run was suspended before this call was made")
	}
	res, e := call()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = append(s.done, LoggedCall{Tool: tool, Args: bytes.Clone(args), Result: bytes.Clone(res), Error: e})
	return res, e
}

// suspension returns the run's suspension with its log, or nil.
func (s *replayState) suspension() *Suspension {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.susp == nil {
		return nil
	}
	out := *s.susp
	out.Log = append([]LoggedCall(nil), s.done...)
	return &out
}

// rpApproval decides a resumable run's call that is not answered from the
// log: the pending call of a replay gets the person's answer; a call that
// needs an approval suspends the run (or asks the Approver); any other
// call made before the pending one is a divergence.
func (r *run) rpApproval(ctx context.Context, info *CallInfo, d Decision, args json.RawMessage, rec *auditCall) error {
	name := info.Tool.Name
	if isPending, ok := r.rp.resolvePending(name, args); isPending {
		if !ok {
			rec.decision = "declined"
			return &sandbox.Error{Code: sandbox.EToolDenied, Tool: name, Rule: d.Rule,
				Message: "the user declined the call to " + name,
				Hint:    "Do not retry this call unless the user asks for it."}
		}
		rec.decision = "approved"
		return nil
	}
	if !d.RequireApproval {
		if e := r.rp.diverged(name); e != nil {
			rec.decision = "diverged"
			return e
		}
		return nil
	}
	if r.rp.suspend {
		rec.decision = "suspended"
		return r.rp.suspendAt(ctx, name, args, approvalRequest(info, d))
	}
	if err := r.approve(ctx, info, d); err != nil {
		rec.decision = "declined"
		if t, ok := err.(timedOut); ok {
			rec.decision = "approval_timeout"
			err = t.error
		}
		return err
	}
	rec.decision = "approved"
	return nil
}

// MayRequireApproval reports whether the broker's policy can make a call
// wait for a person's approval: true for a policy with a require_approval
// rule and for an authorizer that does not say (one that is not a
// PolicyAuthorizer or DefaultAuthorizer, unless it has the same method).
// A host fixes Date only for runs that may be resumed (RunRequest.Clock).
func (b *Broker) MayRequireApproval() bool {
	switch a := b.authorizer().(type) {
	case DefaultAuthorizer:
		return false
	case interface{ MayRequireApproval() bool }:
		return a.MayRequireApproval()
	}
	return true
}

// MayRequireApproval reports whether the policy has a require_approval
// rule.
func (a *PolicyAuthorizer) MayRequireApproval() bool { return a.checker.MayRequireApproval() }

// ApprovalTimeout is how long a person has to answer an approval
// (BrokerConfig.ApprovalTimeout): a suspended run's state expires with it.
func (b *Broker) ApprovalTimeout() time.Duration { return b.cfg.ApprovalTimeout }
