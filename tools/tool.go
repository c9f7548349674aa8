package tools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// Caller says who makes a tool call: the model through MCP (Direct) or a
// program in the sandbox (Code). The host sets it; a client never supplies it.
type Caller string

// The two callers.
const (
	Direct Caller = "direct"
	Code   Caller = "code"
)

// Effects is a tool's effect metadata, as MCP tool annotations describe it.
// The zero value claims nothing: not read-only, not destructive, not
// idempotent, not open-world.
type Effects struct {
	ReadOnly    bool `json:"read_only"`
	Destructive bool `json:"destructive"`
	Idempotent  bool `json:"idempotent"`
	OpenWorld   bool `json:"open_world"`
	// Declared says the effects were stated on purpose even when every
	// field above is false (a tool that writes, destroys nothing and may
	// not be retried). If false, effects with all fields false are taken as
	// undeclared (see Stated); `sandcall tools lint` warns about those.
	Declared bool `json:"-"`
}

// Stated reports whether the effects were declared: Declared, or any
// field set.
func (e Effects) Stated() bool {
	return e.Declared || e.ReadOnly || e.Destructive || e.Idempotent || e.OpenWorld
}

// Example is a worked example of a call, shown to models.
type Example struct {
	Description string          `json:"description,omitempty"`
	Args        json.RawMessage `json:"args"`
	Result      json.RawMessage `json:"result,omitempty"`
}

// Alias is a deprecated name of a tool, kept so that programs and clients
// written against the old name keep working through a stated window.
type Alias struct {
	// Name is the old name; it follows the rules of Tool.Name and must not
	// be the name or alias of any tool in the catalog.
	Name string
	// Until is the end of the window in which calls by Name still work. If
	// zero, the alias is a tombstone: calls by it fail at once with
	// E_TOOL_UNKNOWN naming the replacement.
	Until time.Time
}

// Live reports whether a call by the alias still works at now.
func (a Alias) Live(now time.Time) bool { return now.Before(a.Until) }

// Handler performs a call. args has already been validated against the
// tool's input schema. The result is compact JSON. A failure should be a
// *sandbox.Error (use ToolError); any other error is reported as E_TOOL_FAILED
// with its text.
type Handler func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)

// Tool is one entry of the catalog.
type Tool struct {
	// Name is how programs (tools.<name>) and clients call the tool.
	Name  string
	Title string
	// Description tells a model what question the tool answers, when to use it
	// and when not to.
	Description string
	// InputSchema is a JSON Schema of the arguments object. If nil, the tool
	// takes an empty, closed object.
	InputSchema *jsonschema.Schema
	// OutputSchema is a JSON Schema of the result. If nil, the result is not
	// described.
	OutputSchema *jsonschema.Schema
	Examples     []Example
	Effects      Effects
	// AllowedCallers restricts who may call the tool. If empty, both direct
	// and code callers may (subject to policy).
	AllowedCallers []Caller
	// OutputBudget caps the bytes of one result. If zero, the run's result
	// limit applies.
	OutputBudget int
	// Source says where the tool came from: "builtin", "local", or an upstream
	// server's name. If empty, "builtin".
	Source string
	// SourceName is the tool's name as its source spells it, where Name
	// folds it (an upstream server's markIssueFalsePositive is
	// sonarqube_markissuefalsepositive): search reads the words it shows.
	// If empty, Name's.
	SourceName string
	// Pos is where the tool is defined, as "file:line", for diagnostics
	// (`sandcall tools lint`); local script tools set it. If empty, the
	// definition has no position to show.
	Pos string
	// Aliases are deprecated former names of the tool. An alias is never
	// listed (List, search, run_code's description, tools/list); a call by
	// it works until its Until and carries a next_action naming Name; after
	// that it fails with E_TOOL_UNKNOWN whose hint names Name. If empty, the
	// tool has no other names.
	Aliases []Alias
	// Handler performs the call. Required.
	Handler Handler
	// DirectRaw says that for Direct callers the handler returns the JSON of
	// a whole MCP CallToolResult (content, structuredContent, isError), which
	// the MCP server serves as is; Code callers still get a plain result. A
	// proxy of another MCP server (package upstream) sets it, so that a model
	// sees the upstream's answer unchanged. If false, the result is a value.
	DirectRaw bool

	validator *validator // compiled from InputSchema by Catalog.Add
}

// Call validates args and runs the handler. Most callers go through the broker
// (package bindings), which also authorizes, budgets and audits each call.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	if err := t.Validate(args); err != nil {
		return nil, err
	}
	return t.Handler(ctx, args)
}

// Allows reports whether the tool's own AllowedCallers admits c.
func (t *Tool) Allows(c Caller) bool {
	if len(t.AllowedCallers) == 0 {
		return true
	}
	for _, a := range t.AllowedCallers {
		if a == c {
			return true
		}
	}
	return false
}

// Summary returns the first sentence (or line) of the description, for
// listings.
func (t *Tool) Summary() string {
	d := t.Description
	for i := 0; i < len(d); i++ {
		if d[i] == '\n' || (d[i] == '.' && (i+1 == len(d) || d[i+1] == ' ' || d[i+1] == '\n')) {
			if d[i] == '.' {
				return d[:i+1]
			}
			return d[:i]
		}
	}
	return d
}
