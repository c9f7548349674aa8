// Package tools is sandcall's catalog of tools: what a tool is (Tool: name,
// description, JSON schemas, worked examples, effect metadata, handler), the
// Catalog a server offers, typed Go tools via generics (Func), argument
// validation, and the tool error helpers (ToolError, Transient, Failed,
// ArgError).
//
// A typed tool is a Go function of a struct; Func infers its schemas:
//
//	type args struct {
//		Level string `json:"level" enum:"L1,L2,L3,L4,L5" jsonschema:"employee level"`
//	}
//	tool := tools.MustFunc(tools.Tool{Name: "get_budget_by_level", Description: "..."},
//		func(ctx context.Context, in args) (Budget, error) { ... })
//
// Every call is validated against the tool's input schema before its handler
// runs (Tool.Validate, compiled once by Catalog.Add); a failure is an
// E_TOOL_ARGS *sandbox.Error with the JSON pointer of the first offending
// argument, what was expected and what was given, the allowed values of an
// enum, and a hint a model can act on. Validation walks the raw bytes once
// and allocates nothing when the arguments are valid.
//
// Sub-packages hold the tool sources (tools/local, tools/upstream) and the
// MCP server face (bindings/mcpserver).
//
// # Security
//
// Arguments come from a model or from a program it wrote: they are checked
// as untrusted input (one JSON object, valid UTF-8, nesting capped, no
// declared argument twice, closed schemas reject unknown arguments) and are
// fuzzed (FuzzValidate). Error messages echo at most a few dozen bytes of an
// argument. A tool's own error text reaches the model and the audit log, so
// tool authors must keep secrets, credentials and host paths out of it; a
// panic in a Func tool is reported without its value or stack.
//
// # Limits
//
// Arguments may nest 64 levels. Messages and hints are capped at
// sandbox.MaxMessageBytes; the text of a plain Go error from a tool at
// MaxErrorTextBytes. The validator checks the keywords listed in validate.go
// and treats the rest (format, uniqueItems, if/then/else, ...) as
// annotations; a schema it cannot compile (remote $ref, a pattern outside
// Go's RE2 syntax) is refused when the tool is added.
package tools
