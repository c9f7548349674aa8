package bindings

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/tools"
)

// PolicyAuthorizer is the Authorizer of a compiled policy file. It builds a
// policy.Request from each CallInfo, so the policy sees plain data only.
type PolicyAuthorizer struct {
	checker *policy.Checker
}

var _ Authorizer = (*PolicyAuthorizer)(nil)

// NewPolicyAuthorizer returns the Authorizer of c. If c is nil, the policy
// is policy.Default(), which answers as DefaultAuthorizer does.
func NewPolicyAuthorizer(c *policy.Checker) *PolicyAuthorizer {
	if c == nil {
		c = policy.Default()
	}
	return &PolicyAuthorizer{checker: c}
}

// Checker returns the compiled policy.
func (a *PolicyAuthorizer) Checker() *policy.Checker { return a.checker }

// ToolMeta returns the policy's view of t's metadata.
func ToolMeta(t *tools.Tool) policy.ToolMeta {
	m := policy.ToolMeta{ReadOnly: t.Effects.ReadOnly, Destructive: t.Effects.Destructive,
		Idempotent: t.Effects.Idempotent, OpenWorld: t.Effects.OpenWorld, Source: t.Source}
	if len(t.AllowedCallers) > 0 {
		m.AllowedCallers = make([]string, len(t.AllowedCallers))
		for i, c := range t.AllowedCallers {
			m.AllowedCallers[i] = string(c)
		}
	}
	return m
}

// Authorize implements Authorizer.
func (a *PolicyAuthorizer) Authorize(ctx context.Context, c *CallInfo) Decision {
	req := policy.Request{
		Caller:    string(c.Caller),
		Tool:      c.Tool.Name,
		Meta:      ToolMeta(c.Tool),
		Args:      c.Args,
		Principal: c.Principal,
		Run: policy.Run{ID: c.RunID, Calls: c.Calls, CallsByTool: c.CallsByTool, Elapsed: c.Elapsed,
			Label: c.Label, Flow: c.Flow},
		Label:        c.ArgLabel,
		LabelSources: c.ArgFlow,
		ArgLabels:    c.ArgLabels,
	}
	if rs, ok := ctx.Value(rateStoreKey{}).(policy.RateStore); ok {
		req.Rates = rs
	}
	return a.checker.Decide(&req)
}

// Exposes implements Authorizer.
func (a *PolicyAuthorizer) Exposes(t *tools.Tool, caller tools.Caller, p Principal) bool {
	return a.checker.Exposes(t.Name, ToolMeta(t), string(caller), p)
}

// PolicyFile is a policy file kept in force on a broker: loaded once, then
// reloaded when it changes (Watch) or when asked (Reload, e.g. on SIGHUP).
// A new version that does not compile keeps the old policy in force, and
// the reason is logged with its file:line:col. Swaps are atomic: a call
// already past authorization is not affected, every later call — in the
// same run too — sees the new policy.
type PolicyFile struct {
	path   string
	broker *Broker
	log    *slog.Logger

	mu      sync.Mutex // guards the fields below and serializes reloads
	sum     [sha256.Size]byte
	checker *policy.Checker
}

// LoadPolicyFile compiles the policy at path and puts it in force on b. An
// invalid file is an error (a *policy.Error); nothing is swapped. log
// receives reload messages; if nil, they are discarded.
func LoadPolicyFile(path string, b *Broker, log *slog.Logger) (*PolicyFile, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &PolicyFile{path: path, broker: b, log: log}
	src, sum, err := readPolicy(path)
	if err != nil {
		return nil, err
	}
	c, err := policy.Parse(path, src)
	if err != nil {
		return nil, err
	}
	f.sum, f.checker = sum, c
	b.SetAuthorizer(NewPolicyAuthorizer(c))
	for _, w := range AliasWarnings(path, c, b.Catalog()) {
		log.Warn(w)
	}
	return f, nil
}

func readPolicy(path string) ([]byte, [sha256.Size]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, [sha256.Size]byte{}, &policy.Error{Problems: []policy.Problem{{File: path, Msg: err.Error()}}}
	}
	defer fh.Close()
	src, err := io.ReadAll(io.LimitReader(fh, policy.MaxFileBytes+1))
	if err != nil {
		return nil, [sha256.Size]byte{}, &policy.Error{Problems: []policy.Problem{{File: path, Msg: err.Error()}}}
	}
	return src, sha256.Sum256(src), nil
}

// Checker returns the policy in force.
func (f *PolicyFile) Checker() *policy.Checker {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checker
}

// Reload reads the file and, if its content changed and compiles, puts it in
// force. It reports whether the policy was swapped; on an error the old
// policy stays in force and the error (a *policy.Error for an invalid
// policy) is also logged.
func (f *PolicyFile) Reload() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	src, sum, err := readPolicy(f.path)
	if err != nil {
		f.log.Error("policy reload failed; keeping the policy in force", "file", f.path, "err", err.Error())
		return false, err
	}
	if sum == f.sum {
		return false, nil
	}
	c, err := policy.Parse(f.path, src)
	if err != nil {
		f.sum = sum // log a broken version once, not on every poll
		var pe *policy.Error
		if errors.As(err, &pe) {
			for _, p := range pe.Problems {
				f.log.Error("policy reload rejected; keeping the policy in force", "problem", p.String())
			}
		} else {
			f.log.Error("policy reload rejected; keeping the policy in force", "file", f.path, "err", err.Error())
		}
		return false, err
	}
	f.sum, f.checker = sum, c
	f.broker.SetAuthorizer(NewPolicyAuthorizer(c))
	for _, w := range AliasWarnings(f.path, c, f.broker.Catalog()) {
		f.log.Warn(w)
	}
	f.log.Info("policy reloaded", "file", f.path, "sha256", fmt.Sprintf("%x", sum[:8]))
	return true, nil
}

// Watch polls the file every interval (if zero, every second) and reloads
// it when its content changes, until ctx is done. Polling the content hash,
// not only the modification time, catches edits within the file system's
// timestamp granularity and atomic renames alike, with no dependency.
func (f *PolicyFile) Watch(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	missing := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A missing file (mid-rename, or deleted) keeps the policy in
		// force; say so once, not on every poll.
		if _, err := os.Stat(f.path); err != nil {
			if err.Error() != missing {
				missing = err.Error()
				f.log.Error("policy file unreadable; keeping the policy in force", "file", f.path, "err", missing)
			}
			continue
		}
		missing = ""
		_, _ = f.Reload()
	}
}
