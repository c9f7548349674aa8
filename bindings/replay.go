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

// LoggedCall is one tool call of a resumable run: its place in the order
// the program made its calls (Seq, from 1), the tool, its arguments
// (compact JSON, handles resolved) and, once it completed, its result or
// its error.
type LoggedCall struct {
	Seq    int             `json:"seq"`
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
	// Log holds the calls the run made, in the order they completed, each
	// with its place in the program's order (Seq).
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
// again from the start, with the same Seed and Clock, and its calls are
// compared with the first attempt's by their place in the order the
// program made them (LoggedCall.Seq, numbered as the engine hands the
// calls over, before any of them runs): the call at a place the log holds
// must be the same call (tool and arguments) and is answered from the log,
// not made again; the call at the pending call's place must be the
// pending call, made if Approved and denied otherwise; a call before the
// pending one that the first attempt did not make (it was denied, invalid,
// or not made at all) is made only if it needs an approval again. Any
// other difference before the pending call — a Promise.race that went the
// other way, a program that reads something the replay does not fix — is
// a divergence: the call is denied with E_TOOL_DENIED, and so is every
// call the run makes afterwards that the log does not answer (the pending
// one included), so that nothing is done that the first attempt's path
// would not have done. Calls after the pending one that the log does not
// hold run as usual.
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
	from     map[int]*LoggedCall // the replay's log, by Seq
	pending  *LoggedCall         // the replay's pending call
	approved bool
	reached  bool         // the pending call was made (or there is none)
	strayed  *strayed     // the run diverged from the log
	done     []LoggedCall // calls completed in this attempt, replayed ones included
	active   int          // calls issued and not yet returned
	susp     *Suspension
	// ended: the run was suspended and ended (cancel called). A call
	// dispatched after that is not made, even before the cancellation
	// reaches its context (through a context of another type, Go
	// propagates it on a goroutine of its own).
	ended bool
}

// strayed is where a replay diverged: its first call that differs.
type strayed struct {
	seq  int
	tool string
}

func newReplayState(rp *Replay, suspend bool, cancel context.CancelFunc) *replayState {
	s := &replayState{suspend: suspend, cancel: cancel, reached: true}
	if rp != nil {
		s.from = make(map[int]*LoggedCall, len(rp.Log))
		for i := range rp.Log {
			s.from[rp.Log[i].Seq] = &rp.Log[i]
		}
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

// compare checks the call at place seq against the replay's log, before
// anything is decided about it: a call at a logged place or at the
// pending call's must be that call, and a run that strayed makes no call
// the log does not answer. It returns the divergence error, or nil.
func (s *replayState) compare(seq int, tool string, args json.RawMessage) *sandbox.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.from == nil {
		return nil // not a replay
	}
	if s.strayed != nil {
		if c, ok := s.from[seq]; ok && sameCall(c, tool, args) {
			return nil // answered from the log: nothing is done
		}
		return s.divergence(tool)
	}
	if c, ok := s.from[seq]; ok && !sameCall(c, tool, args) ||
		!ok && s.pending != nil && seq == s.pending.Seq && !sameCall(s.pending, tool, args) {
		s.strayed = &strayed{seq: seq, tool: tool}
		return s.divergence(tool)
	}
	return nil
}

// divergence is the error of a call of a run that strayed. s.mu is held.
func (s *replayState) divergence(tool string) *sandbox.Error {
	msg := fmt.Sprintf("the resumed run diverged from the run that asked for approval: its call %d (to %s) is not the one that run made there "+
		"(a Promise.race that went the other way, or a program that depends on something other than its input and tool results, takes another path when replayed), so the run makes no call its first attempt did not",
		s.strayed.seq, s.strayed.tool)
	return &sandbox.Error{Code: sandbox.EToolDenied, Tool: tool, Message: sandbox.Cap(msg, sandbox.MaxMessageBytes),
		Hint: "Run the program again as a new run_code call (without the request state); make what it calls depend only on its input and tool results."}
}

// answer returns the logged outcome of the call at place seq, if the log
// holds it (compare checked it is the same call), and records it in this
// attempt's log.
func (s *replayState) answer(seq int) (json.RawMessage, *sandbox.Error, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.from[seq]
	if !ok {
		return nil, nil, false
	}
	s.done = append(s.done, *c)
	return c.Result, c.Error, true
}

// mayMake reports whether a call at place seq that needs no approval and
// that the log does not answer may be made: not before the pending call
// (the first attempt made every call before it that it could, and this
// one it did not), not once the run strayed.
func (s *replayState) mayMake(seq int, tool string) *sandbox.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.strayed == nil && (s.reached || s.pending == nil || seq > s.pending.Seq) {
		return nil
	}
	if s.strayed == nil {
		s.strayed = &strayed{seq: seq, tool: tool}
	}
	return s.divergence(tool)
}

// resolvePending answers whether the call at place seq is the pending one
// of the replay, and if so whether it was approved.
func (s *replayState) resolvePending(seq int) (isPending, approved bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reached || s.pending == nil || seq != s.pending.Seq || s.strayed != nil {
		return false, false
	}
	s.reached = true
	return true, s.approved
}

// suspendAt makes the run's first call that needs an approval its pending
// call, lets the other calls in the broker finish (they are logged), then
// ends the run. It returns once ctx ends: the call is never made in this
// attempt.
func (s *replayState) suspendAt(ctx context.Context, seq int, tool string, args json.RawMessage, req ApprovalRequest) *sandbox.Error {
	s.mu.Lock()
	if s.susp == nil {
		s.susp = &Suspension{Pending: LoggedCall{Seq: seq, Tool: tool, Args: bytes.Clone(args)}, Request: req}
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

// enter and leave bracket each call, from the moment the engine hands it
// over (before it runs on a goroutine of its own: run.issue) to its
// return: a suspended run ends only once no call is left, so that every
// call the program made before the pending one, and every call that may
// have had an effect, is in the log.
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
func (s *replayState) dispatch(ctx context.Context, seq int, tool string, args json.RawMessage, call func() (json.RawMessage, *sandbox.Error)) (json.RawMessage, *sandbox.Error) {
	s.mu.Lock()
	ended := s.ended
	s.mu.Unlock()
	if ended || ctx.Err() != nil {
		return nil, sandbox.Errorf(sandbox.ECancelled, "", "the run was suspended before this call was made")
	}
	res, e := call()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = append(s.done, LoggedCall{Seq: seq, Tool: tool, Args: bytes.Clone(args), Result: bytes.Clone(res), Error: e})
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

// rpApproval decides a resumable run's call (place seq) that is not
// answered from the log: the pending call of a replay gets the person's
// answer; a call that needs an approval suspends the run (or asks the
// Approver); any other call before the pending one is a divergence
// (replayState.mayMake).
func (r *run) rpApproval(ctx context.Context, seq int, info *CallInfo, d Decision, args json.RawMessage, rec *auditCall) error {
	name := info.Tool.Name
	if isPending, ok := r.rp.resolvePending(seq); isPending {
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
		if e := r.rp.mayMake(seq, name); e != nil {
			rec.decision = "diverged"
			return e
		}
		return nil
	}
	if r.rp.suspend {
		rec.decision = "suspended"
		return r.rp.suspendAt(ctx, seq, name, args, approvalRequest(info, d))
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
