package bindings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools"
)

// State between runs (docs/guest-api.md#state): a program's state.get,
// set, delete and keys reach the broker as the sandbox.State* calls and
// are answered here, from a store.Space, one namespace per principal. A
// value is kept with the label of the run that wrote it, at the moment it
// wrote it; reading it (or listing its key) joins that label into the
// reading run, so untrusted data parked in state still taints every call
// made after it is read.

// StateConfig bounds the state programs keep between runs. Zero fields
// take the defaults (DefaultStateConfig).
type StateConfig struct {
	// Store keeps the values. If nil, BrokerConfig.Shared when it is a
	// store.Space (Redis: every replica sees the same state), else this
	// process's memory.
	Store store.Space
	// TTL is how long a value is kept when state.set names no ttl_s;
	// MaxTTL the longest ttl_s accepted.
	TTL, MaxTTL time.Duration
	// MaxKeys and MaxBytes bound one principal's state: its keys, and the
	// bytes of its keys and stored values together (each value with its
	// label, as kept).
	MaxKeys  int
	MaxBytes int64
}

// DefaultStateConfig returns the defaults of docs/limits.md: values kept a
// day unless the program says otherwise, at most 30 days, 1,000 keys and
// 1 MiB per principal.
func DefaultStateConfig() StateConfig {
	return StateConfig{TTL: 24 * time.Hour, MaxTTL: 30 * 24 * time.Hour, MaxKeys: 1000, MaxBytes: 1 << 20}
}

// MaxStateKeyBytes caps a state key.
const MaxStateKeyBytes = 256

// resolve fills the zero fields of c; shared is the broker's shared store.
func (c StateConfig) resolve(shared store.Store) StateConfig {
	d := DefaultStateConfig()
	if c.TTL <= 0 {
		c.TTL = d.TTL
	}
	if c.MaxTTL <= 0 {
		c.MaxTTL = max(d.MaxTTL, c.TTL)
	}
	if c.TTL > c.MaxTTL {
		c.TTL = c.MaxTTL
	}
	if c.MaxKeys <= 0 {
		c.MaxKeys = d.MaxKeys
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = d.MaxBytes
	}
	if c.Store == nil {
		if sp, ok := shared.(store.Space); ok {
			c.Store = sp
		} else {
			c.Store = store.NewMemory()
		}
	}
	return c
}

// stateNS is the namespace of p's state.
func stateNS(p Principal) string { return "state:" + p.ID }

// stateValue is a value as kept: the program's JSON and the label of the
// run that wrote it.
type stateValue struct {
	Value     json.RawMessage `json:"v"`
	Untrusted bool            `json:"u,omitempty"`
	// Readers is nil for a public value.
	Readers []string `json:"r,omitempty"`
	Public  bool     `json:"p,omitempty"`
}

func (v stateValue) label() policy.Label {
	l := policy.Label{Untrusted: v.Untrusted}
	if !v.Public {
		l.Readers = append([]string{}, v.Readers...)
	}
	return l
}

// stateCall answers a state call of a program (handled true), or says the
// name is none (handled false). Direct callers have no state.
func (r *run) stateCall(ctx context.Context, seq int, name string, args json.RawMessage, rec *auditCall) (res json.RawMessage, err *sandbox.Error, handled bool) {
	if r.caller != tools.Code || !strings.HasPrefix(name, "$state.") {
		return nil, nil, false
	}
	switch name {
	case sandbox.StateGet, sandbox.StateSet, sandbox.StateDelete, sandbox.StateKeys:
	default:
		return nil, nil, false
	}
	rec.decision = "state"
	var a struct {
		Key    *string         `json:"key"`
		Value  json.RawMessage `json:"value"`
		TTL    *float64        `json:"ttl_s"`
		Prefix *string         `json:"prefix"`
	}
	bad := func(path, msg, hint string) *sandbox.Error {
		return &sandbox.Error{Code: sandbox.EToolArgs, Tool: name, Path: path, Message: msg, Hint: hint}
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if len(bytes.TrimSpace(args)) > 0 && dec.Decode(&a) != nil {
		return nil, bad("", "the arguments of "+name+" are not {key, value, ttl_s} or {prefix}",
			"Call state.get(key), state.set(key, value, {ttl_s}), state.delete(key) or state.keys(prefix)."), true
	}
	cfg := r.b.state
	ns := stateNS(r.principal)
	if name == sandbox.StateKeys {
		prefix := ""
		if a.Prefix != nil {
			prefix = *a.Prefix
		}
		return r.stateKeys(ctx, seq, ns, prefix)
	}
	if a.Key == nil || *a.Key == "" || len(*a.Key) > MaxStateKeyBytes || !utf8.ValidString(*a.Key) {
		return nil, bad("/key", fmt.Sprintf("the key must be a non-empty string of at most %d bytes", MaxStateKeyBytes),
			"Name the value with a short string key, e.g. \"last_digest\"."), true
	}
	key := *a.Key
	switch name {
	case sandbox.StateGet:
		b, gerr := cfg.Store.SpaceGet(ctx, ns, key)
		if errors.Is(gerr, store.ErrNotFound) {
			return json.RawMessage("null"), nil, true
		}
		if gerr != nil {
			return nil, stateUnavailable(name), true
		}
		var v stateValue
		if json.Unmarshal(b, &v) != nil || len(v.Value) == 0 {
			return json.RawMessage("null"), nil, true
		}
		r.joinState(key, seq, v.label())
		return v.Value, nil, true
	case sandbox.StateDelete:
		found, derr := cfg.Store.SpaceDelete(ctx, ns, key)
		if derr != nil {
			return nil, stateUnavailable(name), true
		}
		if found {
			return json.RawMessage("true"), nil, true
		}
		return json.RawMessage("false"), nil, true
	}
	// state.set
	if len(bytes.TrimSpace(a.Value)) == 0 {
		return nil, bad("/value", "state.set needs a value (undefined is not one)",
			"Pass a JSON value; to remove a key, call state.delete(key)."), true
	}
	ttl := cfg.TTL
	if a.TTL != nil {
		s := *a.TTL
		if s < 1 || s > cfg.MaxTTL.Seconds() || s != float64(int64(s)) {
			return nil, bad("/ttl_s", fmt.Sprintf("ttl_s must be a whole number of seconds from 1 to %d", int64(cfg.MaxTTL.Seconds())),
				fmt.Sprintf("Omit ttl_s to keep the value %s, or pass a smaller number of seconds.", cfg.TTL)), true
		}
		ttl = time.Duration(s) * time.Second
	}
	label, _ := r.flow.snapshot()
	v := stateValue{Value: a.Value, Untrusted: label.Untrusted, Readers: label.Readers, Public: label.Public()}
	b, _ := json.Marshal(v)
	perr := cfg.Store.SpacePut(ctx, ns, key, b, ttl, store.Quota{MaxKeys: cfg.MaxKeys, MaxBytes: cfg.MaxBytes})
	var qe *store.QuotaError
	switch {
	case errors.As(perr, &qe) && qe.Keys:
		return nil, &sandbox.Error{Code: sandbox.EToolFailed, Tool: name,
			Message: fmt.Sprintf("the state is full: %d keys are kept, the most allowed", cfg.MaxKeys),
			Hint:    "Delete keys you no longer need with state.delete(key) (state.keys() lists them), or keep several values under one key."}, true
	case errors.As(perr, &qe):
		return nil, &sandbox.Error{Code: sandbox.EToolFailed, Tool: name,
			Message: fmt.Sprintf("the state would hold more than %d bytes (%d are kept; this value takes %d)", cfg.MaxBytes, qe.Used, len(key)+len(b)),
			Hint:    "Keep a smaller value (a summary, ids, totals), or delete keys you no longer need with state.delete(key)."}, true
	case perr != nil:
		return nil, stateUnavailable(name), true
	}
	return json.RawMessage("null"), nil, true
}

// stateKeys lists the keys of ns with prefix, joining the label of each
// (its name was written by a run with that label).
func (r *run) stateKeys(ctx context.Context, seq int, ns, prefix string) (json.RawMessage, *sandbox.Error, bool) {
	st := r.b.state.Store
	keys, err := st.SpaceKeys(ctx, ns, prefix, r.b.state.MaxKeys)
	if err != nil {
		return nil, stateUnavailable(sandbox.StateKeys), true
	}
	out := keys[:0]
	for _, k := range keys {
		b, gerr := st.SpaceGet(ctx, ns, k)
		if errors.Is(gerr, store.ErrNotFound) {
			continue // expired since it was listed
		}
		if gerr != nil {
			return nil, stateUnavailable(sandbox.StateKeys), true
		}
		var v stateValue
		if json.Unmarshal(b, &v) == nil {
			r.joinState(k, seq, v.label())
		}
		out = append(out, k)
	}
	b, _ := sandbox.MarshalJSON(out)
	return b, nil, true
}

// joinState joins the label of a value read from state into the run.
func (r *run) joinState(key string, seq int, l policy.Label) {
	if labelsOff {
		return
	}
	r.flow.join(l, policy.Source{Tool: "state:" + safeName(key), Seq: seq, Label: l})
}

func stateUnavailable(name string) *sandbox.Error {
	return &sandbox.Error{Code: sandbox.EInternal, Tool: name,
		Message: "the state store is unavailable, so " + name + " could not be answered",
		Hint:    "Retry in a few seconds; if it persists, the operator should check the store (store: in sandcall.yaml)."}
}
