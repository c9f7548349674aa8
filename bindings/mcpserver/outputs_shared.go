package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/store"
)

// sharedTimeout bounds one operation on the shared store.
const sharedTimeout = 2 * time.Second

// keepOutput keeps a cut result for read_output and returns its ref: in the
// shared store when Config.Store is set (any replica can then serve the
// pages), else in this process's outputStore. meta (the run's label) is
// kept with it for each page's _meta. ok is false when it could not be kept
// (too large, or the shared store is unavailable: the first page then
// stands alone, and the failure is logged).
func (s *Server) keepOutput(ctx context.Context, principal string, data []byte, meta map[string]any) (ref string, ok bool) {
	if s.shared == nil {
		return s.outputs.putMeta(principal, data, meta)
	}
	if int64(len(data)) > s.outputs.maxBytes {
		return "", false
	}
	var mb []byte
	if len(meta) > 0 {
		var err error
		if mb, err = json.Marshal(meta); err != nil {
			return "", false
		}
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	ref = "out_" + hex.EncodeToString(b[:])
	// principal length, principal, meta length, meta JSON, data.
	v := make([]byte, 4, 8+len(principal)+len(mb)+len(data))
	binary.BigEndian.PutUint32(v, uint32(len(principal)))
	v = append(v, principal...)
	v = binary.BigEndian.AppendUint32(v, uint32(len(mb)))
	v = append(append(v, mb...), data...)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
	defer cancel()
	if err := s.shared.Set(ctx, "out:"+ref, v, s.outputs.ttl); err != nil {
		s.log.Warn("mcpserver: output not kept: shared store unavailable", "err", err)
		return "", false
	}
	return ref, true
}

// loadOutput returns the output under ref and its meta if it is
// principal's and has not expired. err is set only when the shared store
// could not be reached.
func (s *Server) loadOutput(ctx context.Context, principal, ref string) ([]byte, map[string]any, bool, error) {
	if s.shared == nil {
		data, ok := s.outputs.get(principal, ref)
		return data, s.outputs.metaOf(principal, ref), ok, nil
	}
	ctx, cancel := context.WithTimeout(ctx, sharedTimeout)
	defer cancel()
	v, err := s.shared.Get(ctx, "out:"+ref)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	if len(v) < 4 {
		return nil, nil, false, nil
	}
	n := int(binary.BigEndian.Uint32(v))
	if len(v) < 8+n || string(v[4:4+n]) != principal {
		return nil, nil, false, nil // another principal's ref is as unknown as a made-up one
	}
	v = v[4+n:]
	m := int(binary.BigEndian.Uint32(v))
	if len(v) < 4+m {
		return nil, nil, false, nil
	}
	var meta map[string]any
	if m > 0 && json.Unmarshal(v[4:4+m], &meta) != nil {
		return nil, nil, false, nil
	}
	return v[4+m:], meta, true, nil
}

// storeUnavailable is the error of a request that needed the shared store
// while it could not be reached.
func storeUnavailable(tool string) *sandbox.Error {
	return &sandbox.Error{Code: sandbox.EInternal, Tool: tool,
		Message: "the server's shared store is unavailable, so this request could not be served",
		Hint:    "Retry in a few seconds; if it persists, the operator should check the store (store: in sandcall.yaml)."}
}
