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
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
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
// its life: a replica creates it once (SetNX) and every replica reads it.
const (
	approvalKeyName = "approval-key"
	approvalKeyTTL  = 365 * 24 * time.Hour
)

// runState is what the request state holds, sealed.
type runState struct {
	V         int                   `json:"v"`
	Principal string                `json:"p"`
	Expires   int64                 `json:"exp"`  // Unix ms
	Program   []byte                `json:"prog"` // SHA-256 of the program
	Seed      uint64                `json:"seed"`
	Clock     int64                 `json:"clock,omitempty"` // Unix ns; 0: real time
	Log       []bindings.LoggedCall `json:"log"`
	Pending   bindings.LoggedCall   `json:"pending"`
}

// sealState holds the AEAD of request states, once its key is read.
type sealState struct {
	mu   chan struct{} // a one-slot lock that a context can give up on
	aead cipher.AEAD
}

// approvalAEAD returns the AEAD of request states: its key is in the
// shared store (created by the first replica that needs it), or in this
// process without one.
func (s *Server) approvalAEAD(ctx context.Context) (cipher.AEAD, error) {
	s.sealOnce.Do(func() { s.seal.mu = make(chan struct{}, 1) })
	select {
	case s.seal.mu <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.seal.mu }()
	if s.seal.aead != nil {
		return s.seal.aead, nil
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if s.shared != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
		defer cancel()
		if _, err := s.shared.SetNX(ctx, approvalKeyName, key, approvalKeyTTL); err != nil {
			return nil, err
		}
		k, err := s.shared.Get(ctx, approvalKeyName)
		if err != nil {
			return nil, err
		}
		if len(k) != 32 {
			return nil, errors.New("the approval key in the store is not 32 bytes")
		}
		key = k
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	s.seal.aead = aead
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
func stateError(msg string) *sandbox.Error {
	return &sandbox.Error{Code: sandbox.EToolArgs, Tool: RunCodeName, Path: "/requestState", Message: msg,
		Hint: "Call run_code again with the same arguments and without requestState, to start the run afresh."}
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
			if _, err := s.approvalAEAD(ctx); err != nil {
				s.log.Warn("mcpserver: approval key unavailable", "err", err)
				return storeError()
			}
		}
		return nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(st)
	if err != nil || len(raw) < 12+16 {
		return stateError("the request state is not one this server issued")
	}
	aead, err := s.approvalAEAD(ctx)
	if err != nil {
		s.log.Warn("mcpserver: approval key unavailable", "err", err)
		return storeError()
	}
	plain, err := aead.Open(nil, raw[:12], raw[12:], stateAD(rr.Principal.ID))
	if err != nil {
		return stateError("the request state is not one this server issued for this user (or it was altered)")
	}
	var rs runState
	if err := json.Unmarshal(plain, &rs); err != nil || rs.V != 1 || rs.Principal != rr.Principal.ID {
		return stateError("the request state is not one this server issued")
	}
	if time.Now().UnixMilli() >= rs.Expires {
		return &sandbox.Error{Code: sandbox.EToolDenied, Tool: rs.Pending.Tool,
			Message: "nobody approved the call to " + rs.Pending.Tool + " within the approval timeout",
			Hint:    "Call run_code again without requestState and ask the user to answer the approval promptly."}
	}
	if !bytes.Equal(rs.Program, programHash(rr.Program, rr.ModuleSHA256)) {
		return stateError("the request state belongs to another program: resend the run_code arguments unchanged with it")
	}
	approved, ok := approvalAnswer(req.Params.InputResponses)
	if !ok {
		return &sandbox.Error{Code: sandbox.EToolArgs, Tool: RunCodeName, Path: "/inputResponses/" + approvalInputID,
			Message: "the answer to the approval (input response " + approvalInputID + ") is missing",
			Hint:    "Send the person's answer to the elicitation " + approvalInputID + " in inputResponses, with the request state."}
	}
	rr.Seed = rs.Seed
	if rs.Clock != 0 {
		rr.Clock = time.Unix(0, rs.Clock).UTC()
	}
	rr.Replay = &bindings.Replay{Log: rs.Log, Pending: rs.Pending, Approved: approved}
	return nil
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

// inputRequired is run_code's answer for a suspended run: the question for
// the person, and the sealed state to resume from.
func (s *Server) inputRequired(ctx context.Context, rr *bindings.RunRequest, susp *bindings.Suspension) *mcp.CallToolResult {
	rs := runState{V: 1, Principal: rr.Principal.ID,
		Expires: time.Now().Add(s.broker.ApprovalTimeout()).UnixMilli(),
		Program: programHash(rr.Program, rr.ModuleSHA256), Seed: rr.Seed, Log: susp.Log, Pending: susp.Pending}
	if !rr.Clock.IsZero() {
		rs.Clock = rr.Clock.UnixNano()
	}
	plain, err := json.Marshal(rs)
	if err != nil {
		s.log.Error("mcpserver: run state does not marshal", "err", err)
		return s.runFailure(internalError())
	}
	aead, err := s.approvalAEAD(ctx)
	if err != nil {
		s.log.Warn("mcpserver: approval key unavailable", "err", err)
		return s.runFailure(storeError())
	}
	nonce := make([]byte, 12, 12+len(plain)+16)
	_, _ = rand.Read(nonce)
	sealed := aead.Seal(nonce, nonce, plain, stateAD(rr.Principal.ID))
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInputID: &mcp.ElicitParams{Mode: "form", Message: susp.Request.Message,
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}}},
		RequestState: base64.RawURLEncoding.EncodeToString(sealed),
	}
}
