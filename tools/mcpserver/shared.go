package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/store"
)

// sharedTimeout bounds one operation on the shared store.
const sharedTimeout = 2 * time.Second

// keepOutput keeps a cut result for read_output and returns its ref: in the
// shared store when Config.Store is set (any replica can then serve the
// pages), else in this process's outputStore. ok is false when it could not
// be kept (too large, or the shared store is unavailable: the first page
// then stands alone, and the failure is logged).
func (s *Server) keepOutput(ctx context.Context, principal string, data []byte) (ref string, ok bool) {
	if s.shared == nil {
		return s.outputs.put(principal, data)
	}
	if int64(len(data)) > s.outputs.maxBytes {
		return "", false
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	ref = "out_" + hex.EncodeToString(b[:])
	v := make([]byte, 4, 4+len(principal)+len(data))
	binary.BigEndian.PutUint32(v, uint32(len(principal)))
	v = append(append(v, principal...), data...)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
	defer cancel()
	if err := s.shared.Set(ctx, "out:"+ref, v, s.outputs.ttl); err != nil {
		s.log.Warn("mcpserver: output not kept: shared store unavailable", "err", err)
		return "", false
	}
	return ref, true
}

// loadOutput returns the output under ref if it is principal's and has not
// expired. err is set only when the shared store could not be reached.
func (s *Server) loadOutput(ctx context.Context, principal, ref string) ([]byte, bool, error) {
	if s.shared == nil {
		data, ok := s.outputs.get(principal, ref)
		return data, ok, nil
	}
	ctx, cancel := context.WithTimeout(ctx, sharedTimeout)
	defer cancel()
	v, err := s.shared.Get(ctx, "out:"+ref)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(v) < 4 {
		return nil, false, nil
	}
	n := int(binary.BigEndian.Uint32(v))
	if len(v) < 4+n || string(v[4:4+n]) != principal {
		return nil, false, nil // another principal's ref is as unknown as a made-up one
	}
	return v[4+n:], true, nil
}

// storeUnavailable is the error of a request that needed the shared store
// while it could not be reached.
func storeUnavailable(tool string) *sandbox.Error {
	return &sandbox.Error{Code: sandbox.EInternal, Tool: tool,
		Message: "the server's shared store is unavailable, so this request could not be served",
		Hint:    "Retry in a few seconds; if it persists, the operator should check the store (store: in sandcall.yaml)."}
}
