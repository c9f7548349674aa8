// Package programs makes programs into tools: the JavaScript and
// TypeScript files of a project's .agents/programs directory (Dir), and
// the programs a model saved with save_program (Saved, in a store.Space).
// A program tool is listed, searched, described and called like any tool;
// its call runs the program in the sandbox as its caller — the host's
// Runner (bindings.Runner) implements it — with the call's arguments as
// `args`, and what the program returns is the result. docs/programs.md
// has the conventions.
//
// A program is versioned by the SHA-256 of its text: a file edited is
// trusted again before it runs (as a project's scripts are), a saved
// program changed is saved again, which the default policy sends to a
// person for approval.
package programs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// The Tool.Source of program tools: operators' files, and models' saves.
const (
	SourceFile  = "program"
	SourceSaved = "saved"
)

// DefaultMaxDepth is how deep programs may call programs: a program
// called from a program called from run_code is depth 2.
const DefaultMaxDepth = 3

// Program is a program that is a tool.
type Program struct {
	Name        string
	Description string
	// Language is sandbox.JavaScript or sandbox.TypeScript.
	Language sandbox.Language
	Source   string
	// InputSchema is the JSON Schema of the arguments (an object schema).
	InputSchema json.RawMessage
	Effects     tools.Effects
	// SHA256 is the lower-case hex SHA-256 of Source: the version.
	SHA256 string
	// Plan is what Source names (sandbox/plan).
	Plan sandbox.Plan
	// Origin is SourceFile or SourceSaved.
	Origin string
	// Owner is the principal that saved the program; only its calls see
	// it. Empty for a file program: every principal's.
	Owner string
	// Pos is "file:line" of a file program's header, for diagnostics.
	Pos string
	// SavedAt is when a saved program was saved.
	SavedAt time.Time
}

// Version is the short form of SHA256 shown to people.
func (p *Program) Version() string {
	if len(p.SHA256) < 12 {
		return p.SHA256
	}
	return p.SHA256[:12]
}

// VisibleTo reports whether calls for principal may see and call p.
func (p *Program) VisibleTo(principal string) bool { return p.Owner == "" || p.Owner == principal }

func hashSource(lang sandbox.Language, src string) string {
	h := sha256.Sum256([]byte(string(lang) + "\n" + src))
	return hex.EncodeToString(h[:])
}

// Runner runs a program as a tool call: ctx is the call's (the broker's
// CallContext is on it), args the validated arguments. bindings.Runner
// implements it.
type Runner interface {
	RunProgram(ctx context.Context, p *Program, args json.RawMessage) (json.RawMessage, error)
}

// Registry knows which tools of a catalog are programs, and runs them
// with the Runner set on it. It is safe for concurrent use; one Registry
// serves a Dir and a Saved together.
type Registry struct {
	mu     sync.RWMutex
	byTool map[*tools.Tool]*Program
	runner atomic.Pointer[runnerBox]
}

type runnerBox struct{ r Runner }

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry { return &Registry{byTool: map[*tools.Tool]*Program{}} }

// SetRunner sets what runs the programs (the runner is built after the
// catalog it serves).
func (r *Registry) SetRunner(run Runner) { r.runner.Store(&runnerBox{run}) }

// Of returns the program t runs, if t is one of the Registry's tools.
func (r *Registry) Of(t *tools.Tool) (*Program, bool) {
	if r == nil || t == nil {
		return nil, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.byTool[t]
	return p, ok
}

// Programs returns every program of the Registry.
func (r *Registry) Programs() []*Program {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Program, 0, len(r.byTool))
	for _, p := range r.byTool {
		out = append(out, p)
	}
	return out
}

// tool makes p a tool and registers it.
func (r *Registry) tool(p *Program) (*tools.Tool, error) {
	schema, err := tools.ParseSchema(p.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("the parameter schema: %w", err)
	}
	t := &tools.Tool{
		Name:        p.Name,
		Description: p.Description,
		InputSchema: schema,
		Effects:     p.Effects,
		Source:      p.Origin,
		Pos:         p.Pos,
		Handler: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			b := r.runner.Load()
			if b == nil {
				return nil, tools.ToolError(sandbox.EInternal, "program "+p.Name+" cannot run here: no runner is set", "")
			}
			return b.r.RunProgram(ctx, p, args)
		},
	}
	r.mu.Lock()
	r.byTool[t] = p
	r.mu.Unlock()
	return t, nil
}

// forget unregisters t.
func (r *Registry) forget(t *tools.Tool) {
	r.mu.Lock()
	delete(r.byTool, t)
	r.mu.Unlock()
}
