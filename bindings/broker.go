package bindings

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/programs"
)

// BrokerConfig configures a Broker. The zero value of each optional field is
// the safe default, stated on the field.
type BrokerConfig struct {
	// Catalog holds the tools. Required.
	Catalog *tools.Catalog
	// Authorizer decides every call. If nil, DefaultAuthorizer.
	Authorizer Authorizer
	// Audit receives one record per attempted call and one per run
	// (package audit gives their format, docs/operations.md their fields).
	// If nil, records are discarded.
	Audit *slog.Logger
	// Logger receives operational messages (a tool that panicked, say). If
	// nil, they are discarded.
	Logger *slog.Logger
	// CallTimeout bounds one tool call. If zero, 30 s; a run's own deadline
	// applies as well.
	CallTimeout time.Duration
	// MaxOutputBytes caps one tool result when the tool sets no OutputBudget.
	// If zero, 4 MiB.
	MaxOutputBytes int
	// ApprovalTimeout bounds the wait for a person's answer to an approval
	// (require_approval); no answer in time denies the call. If zero, 2
	// minutes. A run's own deadline applies as well.
	ApprovalTimeout time.Duration
	// Observer receives per-call and per-run outcomes and latencies (for
	// metrics). If nil, nothing is observed.
	Observer Observer
	// MaxRetries caps the extra attempts the broker makes after a transient
	// failure (a retryable E_TOOL_FAILED, the broker's own per-call timeout
	// included) of an idempotent tool (Effects.Idempotent); other tools and
	// other errors are never retried. If zero, 2; if negative, no call is
	// retried.
	MaxRetries int
	// RetryBackoff is the wait before the first retry; each later retry
	// waits four times longer, each wait jittered to a random 50-100 % of
	// it. If zero, 20 ms (so 20 ms, then 80 ms).
	RetryBackoff time.Duration
	// Now is the clock that decides whether a deprecated alias
	// (tools.Alias) is still callable. If nil, time.Now.
	Now func() time.Time
	// Shared, if set, holds the policy's rate-limit buckets (a store shared
	// by replicas, so that a limit of N calls holds across them). If nil,
	// each policy counts in its own memory.
	Shared store.Store
	// Tracer, if set, records a span per run and per tool call (spans.go).
	// If nil, nothing is traced.
	Tracer trace.TracerProvider
	// Programs says which catalog tools are programs (tools/programs), so
	// that a saved program is its owner's only and a plan names what the
	// programs it calls name (programs.go, plan.go). If nil, no tool is a
	// program.
	Programs *programs.Registry
	// MaxProgramDepth is how deep programs may call programs. If zero,
	// programs.DefaultMaxDepth (3).
	MaxProgramDepth int
	// State bounds the state programs keep between runs (state.go). Its
	// zero value takes DefaultStateConfig, in Shared when that is a
	// store.Space, else in memory.
	State StateConfig
}

// Observer receives the outcome of every attempted call and every run, for
// counters and latency histograms. Outcomes are "ok", "failed" and
// "denied" for calls, "ok" and "error" for runs. tool is "(unknown)" for a
// name not in the catalog, so a guest cannot grow the label set. Methods
// are called on the caller's goroutine and must not block.
type Observer interface {
	ObserveCall(tool, caller, outcome string, d time.Duration)
	ObserveRun(outcome, code string, d time.Duration)
}

// Broker is the single path of every tool call, from code or direct: lookup,
// validation, authorization, budgets, dispatch, output budget and audit.
// It is safe for concurrent use.
type Broker struct {
	// cfg is the BrokerConfig with every default applied (Authorizer
	// aside, kept in auth): in it MaxRetries is the number of retries,
	// 0 for none.
	cfg    BrokerConfig
	auth   atomic.Pointer[authorizerBox]
	tracer trace.Tracer // nil: tracing off (spans.go)

	obsMu     sync.Mutex
	onAuthSet []func()

	known known // names the catalog held, and why missing ones are (notcallable.go)

	state StateConfig // resolved (state.go)
}

type authorizerBox struct{ a Authorizer }

// NewBroker returns a broker for cfg.
func NewBroker(cfg BrokerConfig) (*Broker, error) {
	if cfg.Catalog == nil {
		return nil, errors.New("bindings: BrokerConfig.Catalog is required")
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = 2
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 20 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = 2 * time.Minute
	}
	if cfg.Audit == nil {
		cfg.Audit = slog.New(slog.DiscardHandler)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 30 * time.Second
	}
	if cfg.MaxOutputBytes <= 0 {
		cfg.MaxOutputBytes = 4 << 20
	}
	b := &Broker{cfg: cfg, state: cfg.State.resolve(cfg.Shared)}
	if cfg.Tracer != nil {
		b.tracer = cfg.Tracer.Tracer(TracerName)
	}
	a := cfg.Authorizer
	if a == nil {
		a = DefaultAuthorizer{}
	}
	b.auth.Store(&authorizerBox{a})
	b.watchNames()
	return b, nil
}

// Catalog returns the broker's catalog.
func (b *Broker) Catalog() *tools.Catalog { return b.cfg.Catalog }

// SetAuthorizer swaps the authorizer atomically; calls already past
// authorization are not affected, every later call sees the new one.
func (b *Broker) SetAuthorizer(a Authorizer) {
	if a == nil {
		a = DefaultAuthorizer{}
	}
	b.auth.Store(&authorizerBox{a})
	b.obsMu.Lock()
	fs := b.onAuthSet
	b.obsMu.Unlock()
	for _, f := range fs {
		f()
	}
}

// OnAuthorizerChange registers f to be called after every SetAuthorizer (a
// reloaded policy file calls it), so that listings derived from the policy
// (the MCP tool list, run_code's bindings) can be rebuilt. f runs
// synchronously in the goroutine that set the authorizer and must be quick.
// There is no way to unregister.
func (b *Broker) OnAuthorizerChange(f func()) {
	if f == nil {
		return
	}
	b.obsMu.Lock()
	b.onAuthSet = append(b.onAuthSet, f)
	b.obsMu.Unlock()
}

func (b *Broker) authorizer() Authorizer { return b.auth.Load().a }

// Exposed returns the tools offered to caller for p, sorted by name.
func (b *Broker) Exposed(caller tools.Caller, p Principal) []*tools.Tool {
	a := b.authorizer()
	all := b.cfg.Catalog.List()
	out := all[:0]
	for _, t := range all {
		if a.Exposes(t, caller, p) && b.visible(t, p) {
			out = append(out, t)
		}
	}
	return out
}
