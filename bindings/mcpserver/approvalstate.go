package mcpserver

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/store"
)

// Approvals without a session (MCP 2026-07-28, multi round-trip requests):
// a run whose call needs a person's approval does not wait on the
// session; it stops (bindings.RunRequest.Suspend) and run_code answers an
// input-required result: one elicitation for the client to put to the
// person, and a request state sealed with AES-256-GCM under a key that
// every replica shares through the store. The client calls run_code again
// with the same arguments, the person's answer and the state; any replica
// opens the state and resumes the run by replay (bindings.Replay).

// approvalInputID names the input request of an approval.
const approvalInputID = "sandcall_approval"

// approvalKeyName is the store key of the sealing key, and approvalKeyTTL
// its life: a replica creates it (SetNX) when the store has none, and
// every replica reads it from the store each time it seals or opens a
// state, so that after the store lost it (a restart without persistence)
// the replicas agree on the new one and no replica's copy of the old one
// opens a state of before.
//
// A state is used at most once, whatever the store loses: sealing it
// writes a pending marker (pendingPrefix + the state's ID, for as long as
// the state is valid), and the answer takes the marker with GetDel before
// anything runs. A marker the store lost — with the key or on its own —
// refuses the state: a store that forgets makes an approval unusable,
// never usable twice.
const (
	approvalKeyName = "approval-key"
	approvalKeyTTL  = 365 * 24 * time.Hour
	pendingPrefix   = "approval-pending:"
)

// stateVersion is runState.V: states of another version are refused.
const stateVersion = 2

// runState is what the request state holds, sealed.
type runState struct {
	V         int                   `json:"v"`
	ID        string                `json:"id"` // its pending marker (pendingPrefix)
	Principal string                `json:"p"`
	Expires   int64                 `json:"exp"`  // Unix ms
	Program   []byte                `json:"prog"` // SHA-256 of the program
	Seed      uint64                `json:"seed"`
	Clock     int64                 `json:"clock,omitempty"` // Unix ns; 0: real time
	Log       []bindings.LoggedCall `json:"log"`
	Pending   bindings.LoggedCall   `json:"pending"`
	Run       string                `json:"run,omitempty"` // the run that suspended, for the audit
}

// sealState holds the AEAD of request states and its key, and the
// pending markers when there is no shared store.
type sealState struct {
	mu      chan struct{} // a one-slot lock that a context can give up on
	key     []byte
	aead    cipher.AEAD
	pending *store.Memory // pending markers, without Config.Store
}

func (s *Server) initSeal() {
	s.seal.mu = make(chan struct{}, 1)
	s.seal.pending = store.NewMemory()
}

// markers is where pending markers live: the shared store, or this
// process's memory (which the key, in this process too, dies with).
func (s *Server) markers() store.Store {
	if s.shared != nil {
		return s.shared
	}
	s.sealOnce.Do(s.initSeal)
	return s.seal.pending
}

// approvalAEAD returns the AEAD of request states: its key is in the
// shared store (created by the replica that finds none), or in this
// process without one. fresh reads the store's key again (to seal or
// open a state: the store may have lost it and another replica made the
// next); otherwise a key read before will do (the check before a run).
func (s *Server) approvalAEAD(ctx context.Context, fresh bool) (cipher.AEAD, error) {
	s.sealOnce.Do(s.initSeal)
	select {
	case s.seal.mu <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.seal.mu }()
	if s.seal.aead != nil && (s.shared == nil || !fresh) {
		return s.seal.aead, nil
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if s.shared != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
		defer cancel()
		k, err := s.shared.Get(ctx, approvalKeyName)
		if errors.Is(err, store.ErrNotFound) {
			if _, err = s.shared.SetNX(ctx, approvalKeyName, key, approvalKeyTTL); err == nil {
				k, err = s.shared.Get(ctx, approvalKeyName)
			}
		}
		if err != nil {
			return nil, err
		}
		if len(k) != 32 {
			return nil, errors.New("the approval key in the store is not 32 bytes")
		}
		key = k
	}
	if s.seal.aead != nil && bytes.Equal(key, s.seal.key) {
		return s.seal.aead, nil
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	s.seal.key, s.seal.aead = key, aead
	return aead, nil
}

// stateAD binds a sealed state to its principal.
func stateAD(principal string) []byte { return []byte("sandcall run state v1\x00" + principal) }

// programHash identifies the program of a run_code call: the resumed call
// must carry the same one.
func programHash(p sandbox.Program, moduleSHA string) []byte {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(p.Language), []byte(p.Source), p.Input, p.Module, []byte(moduleSHA)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return h.Sum(nil)
}

// resumable reports whether a run_code request may suspend on an approval:
// the client speaks 2026-07-28 or later and can ask a person (form
// elicitation).
func resumable(req *mcp.CallToolRequest) bool {
	if req == nil || req.Session == nil || req.ProtocolVersion() < statelessVersion {
		return false
	}
	c := req.ClientCapabilities()
	return c != nil && c.Elicitation != nil && (c.Elicitation.Form != nil || c.Elicitation.URL == nil)
}

// stateError is the error of a request state that cannot be used.
func stateError(msg string) *sandbox.Error { return stateErrorFor(RunCodeName, msg) }

// stateErrorFor is stateError for a request state sent with a call of tool.
func stateErrorFor(tool, msg string) *sandbox.Error {
	return &sandbox.Error{Code: sandbox.EToolArgs, Tool: tool, Path: "/requestState", Message: msg,
		Hint: "Call " + tool + " again with the same arguments and without requestState, to start afresh."}
}

// storeError is the error of a shared store that cannot be reached.
func storeError() *sandbox.Error {
	return sandbox.Errorf(sandbox.EInternal, "The server's shared store is unavailable; try again shortly.",
		"a call of this run may need a person's approval, and the key that seals the run's state could not be read from the shared store")
}

// prepareResume fills rr for a resumable request: Suspend, a Seed and a
// Clock for a first attempt, or those of the sealed state and its Replay
// for an answer. It returns an error for a state that cannot be used.
func (s *Server) prepareResume(ctx context.Context, req *mcp.CallToolRequest, rr *bindings.RunRequest) *sandbox.Error {
	rr.Suspend = true
	st := req.Params.RequestState
	if st == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		rr.Seed = binary.LittleEndian.Uint64(b[:]) | 1
		if s.broker.MayRequireApproval() {
			rr.Clock = time.Now().UTC()
			// The key is read before the run, not when it suspends: a run
			// that could not seal its state would lose the calls it made.
			if _, err := s.approvalAEAD(ctx, false); err != nil {
				s.log.Warn("mcpserver: approval key unavailable", "err", err)
				return storeError()
			}
		}
		return nil
	}
	rs, approved, e := s.answerState(ctx, req, RunCodeName, rr.Principal.ID, programHash(rr.Program, rr.ModuleSHA256),
		"the request state belongs to another program: resend the run_code arguments unchanged with it")
	if e != nil {
		return e
	}
	rr.Seed = rs.Seed
	if rs.Clock != 0 {
		rr.Clock = time.Unix(0, rs.Clock).UTC()
	}
	rr.Replay = &bindings.Replay{Log: rs.Log, Pending: rs.Pending, Approved: approved, From: rs.Run}
	return nil
}

// prepareDirectResume fills dc for a direct call on 2026-07-28: Suspend
// for a first attempt (a call that needs an approval answers input
// required), or the person's answer to the sealed call.
func (s *Server) prepareDirectResume(ctx context.Context, req *mcp.CallToolRequest, dc *bindings.DirectCall) *sandbox.Error {
	dc.Approver = nil
	if req.Params.RequestState == "" {
		dc.Suspend = true
		return nil
	}
	rs, approved, e := s.answerState(ctx, req, dc.Tool, dc.Principal.ID, callHash(dc.Tool, dc.Args),
		"the request state belongs to another call: resend the same tool with the same arguments with it")
	if e != nil {
		return e
	}
	dc.Resume = &bindings.Replay{Pending: rs.Pending, Approved: approved}
	return nil
}

// answerState opens the request state that req sends back with a call of
// tool, checks it (issued for principal, not expired, for the call whose
// hash is want, answered) and records that it was used: a request state
// answers once, on any replica (one-time use, useState), so that a call a
// person approved is made at most once however often the answer is sent.
func (s *Server) answerState(ctx context.Context, req *mcp.CallToolRequest, tool, principal string, want []byte, other string) (*runState, bool, *sandbox.Error) {
	st := req.Params.RequestState
	if int64(len(st)) > s.maxStateBytes() { // the cap is on the base64 text, as sealInput applies it
		// Refused before it is decoded or opened: the cost of a state is
		// bounded whatever a client sends.
		return nil, false, stateErrorFor(tool, "the request state is larger than any this server issues")
	}
	raw, err := base64.RawURLEncoding.DecodeString(st)
	if err != nil || len(raw) < 12+16 {
		return nil, false, stateErrorFor(tool, "the request state is not one this server issued")
	}
	aead, err := s.approvalAEAD(ctx, true)
	if err != nil {
		s.log.Warn("mcpserver: approval key unavailable", "err", err)
		return nil, false, storeError()
	}
	plain, err := aead.Open(nil, raw[:12], raw[12:], stateAD(principal))
	if err != nil {
		return nil, false, stateErrorFor(tool, "the request state is not one this server issued for this user, or it was altered, "+
			"or the server's shared state was reset since it was issued")
	}
	var rs runState
	if err := json.Unmarshal(plain, &rs); err != nil || rs.V != stateVersion || rs.Principal != principal || rs.ID == "" {
		return nil, false, stateErrorFor(tool, "the request state is not one this server issued")
	}
	if time.Now().UnixMilli() >= rs.Expires {
		return nil, false, &sandbox.Error{Code: sandbox.EToolDenied, Tool: rs.Pending.Tool,
			Message: "nobody approved the call to " + rs.Pending.Tool + " within the approval timeout",
			Hint:    "Call " + tool + " again without requestState and ask the user to answer the approval promptly."}
	}
	if !bytes.Equal(rs.Program, want) {
		return nil, false, stateErrorFor(tool, other)
	}
	approved, ok := approvalAnswer(req.Params.InputResponses)
	if !ok {
		return nil, false, &sandbox.Error{Code: sandbox.EToolArgs, Tool: tool, Path: "/inputResponses/" + approvalInputID,
			Message: "the answer to the approval (input response " + approvalInputID + ") is missing",
			Hint:    "Send the person's answer to the elicitation " + approvalInputID + " in inputResponses, with the request state."}
	}
	if e := s.useState(ctx, rs.ID, rs.Pending.Tool, tool); e != nil {
		return nil, false, e
	}
	return &rs, approved, nil
}

// useState takes the pending marker of the state id (GetDel): the first
// answer, on any replica, gets it; a second answer does not, and neither
// does an answer the store lost the marker of.
func (s *Server) useState(ctx context.Context, id, pending, tool string) *sandbox.Error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
	defer cancel()
	_, err := s.markers().GetDel(ctx, pendingPrefix+id)
	if errors.Is(err, store.ErrNotFound) {
		return &sandbox.Error{Code: sandbox.EToolDenied, Tool: pending,
			Message: "this approval was already answered, or the server no longer holds it (its shared store lost it): a request state " +
				"is used once, so the call to " + pending + " it asked about was made (or declined) at most once, by the first answer",
			Hint: "Do not send this request state again. To make the call again, call " + tool +
				" again without requestState: the user is asked anew."}
	}
	if err != nil {
		s.log.Warn("mcpserver: cannot take a request state's pending marker", "err", err)
		return storeError()
	}
	return nil
}

// maxStateBytes is the cap of a sealed request state (Config.MaxRequestStateBytes).
func (s *Server) maxStateBytes() int64 {
	if s.maxState > 0 {
		return s.maxState
	}
	return DefaultMaxRequestStateBytes
}

// approvalAnswer reads the person's answer from the input responses: an
// accepted elicitation approves; a decline or a dismissal does not.
func approvalAnswer(in mcp.InputResponseMap) (approved, ok bool) {
	r, found := in[approvalInputID]
	if !found {
		return false, false
	}
	e, isElicit := r.(*mcp.ElicitResult)
	if !isElicit || e == nil {
		return false, false
	}
	return e.Action == "accept", true
}

// DefaultMaxRequestStateBytes is the default cap of a sealed request state
// (Config.MaxRequestStateBytes): 1 MiB of base64.
const DefaultMaxRequestStateBytes = 1 << 20

// inputRequired is run_code's answer for a suspended run: the question for
// the person, and the sealed state to resume from.
func (s *Server) inputRequired(ctx context.Context, rr *bindings.RunRequest, susp *bindings.Suspension) *mcp.CallToolResult {
	rs := runState{Principal: rr.Principal.ID,
		Expires: time.Now().Add(s.broker.ApprovalTimeout()).UnixMilli(),
		Program: programHash(rr.Program, rr.ModuleSHA256), Seed: rr.Seed, Log: susp.Log, Pending: susp.Pending, Run: susp.RunID}
	if !rr.Clock.IsZero() {
		rs.Clock = rr.Clock.UnixNano()
	}
	res, e := s.sealInput(ctx, &rs, susp)
	if e != nil {
		return s.runFailure(e)
	}
	return res
}

// directInputRequired is a direct call's answer when the call needs an
// approval: the question, and the sealed call (tool, arguments) to make
// once the person answers.
func (s *Server) directInputRequired(ctx context.Context, principal bindings.Principal, name string, args json.RawMessage, susp *bindings.Suspension) *mcp.CallToolResult {
	rs := runState{Principal: principal.ID,
		Expires: time.Now().Add(s.broker.ApprovalTimeout()).UnixMilli(),
		Program: callHash(name, args), Pending: susp.Pending}
	res, e := s.sealInput(ctx, &rs, susp)
	if e != nil {
		return errorResult(e)
	}
	return res
}

// callHash identifies a direct call (tool name as called, compact
// arguments): the answer must carry the same call. It cannot equal a
// programHash (another domain).
func callHash(name string, args json.RawMessage) []byte {
	var c bytes.Buffer
	if json.Compact(&c, args) != nil {
		c.Reset()
		c.Write(args)
	}
	h := sha256.New()
	h.Write([]byte("sandcall direct call v1\x00"))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(name)))
	h.Write(n[:])
	h.Write([]byte(name))
	h.Write(c.Bytes())
	return h.Sum(nil)
}

// sealInput seals rs and returns the input-required result asking susp's
// question. A state over the cap is not returned: the error says how to
// stay under it.
func (s *Server) sealInput(ctx context.Context, rs *runState, susp *bindings.Suspension) (*mcp.CallToolResult, *sandbox.Error) {
	rs.V, rs.ID = stateVersion, rand.Text()
	plain, err := json.Marshal(rs)
	if err != nil {
		s.log.Error("mcpserver: run state does not marshal", "err", err)
		return nil, internalError()
	}
	if max := s.maxStateBytes(); int64(base64.RawURLEncoding.EncodedLen(12+len(plain)+16)) > max {
		return nil, stateTooLarge(rs, max)
	}
	aead, err := s.approvalAEAD(ctx, true)
	if err != nil {
		s.log.Warn("mcpserver: approval key unavailable", "err", err)
		return nil, storeError()
	}
	// The pending marker, before the state leaves: without it the state
	// answers nothing.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
	err = s.markers().Set(mctx, pendingPrefix+rs.ID, []byte{1}, time.Until(time.UnixMilli(rs.Expires))+time.Minute)
	cancel()
	if err != nil {
		s.log.Warn("mcpserver: cannot record a request state's pending marker", "err", err)
		return nil, storeError()
	}
	nonce := make([]byte, 12, 12+len(plain)+16)
	_, _ = rand.Read(nonce)
	sealed := aead.Seal(nonce, nonce, plain, stateAD(rs.Principal))
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInputID: &mcp.ElicitParams{Mode: "form", Message: susp.Request.Message,
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}}},
		RequestState: base64.RawURLEncoding.EncodeToString(sealed),
	}, nil
}

// stateTooLarge is the error of a suspension whose state is over the cap:
// the calls logged were made; the pending one was not.
func stateTooLarge(rs *runState, max int64) *sandbox.Error {
	return &sandbox.Error{Code: sandbox.EOutputLimit, Tool: rs.Pending.Tool,
		Message: fmt.Sprintf("the call to %s needs a person's approval, and the state to resume from (%d tool calls made before it, with their results) is over the server's limit of %d bytes: the run ends here; the calls before it were made, %s was not",
			rs.Pending.Tool, len(rs.Log), max, rs.Pending.Tool),
		Hint: "Make fewer or smaller tool calls (or return less from them) before the call that needs approval, " +
			"or connect with a stateful MCP session (protocol 2025-11-25), where the approval is asked during the run."}
}
