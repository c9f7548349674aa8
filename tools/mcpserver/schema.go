package mcpserver

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/sandbox"
)

// errorSchema describes a *sandbox.Error.
func errorSchema() *jsonschema.Schema {
	codes := make([]any, len(sandbox.Codes))
	for i, c := range sandbox.Codes {
		codes[i] = string(c)
	}
	str := func(d string) *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Description: d} }
	return &jsonschema.Schema{
		Type:        "object",
		Description: "Why the run or call failed.",
		Properties: map[string]*jsonschema.Schema{
			"code":           {Type: "string", Enum: codes, Description: "Stable error code."},
			"message":        str("What went wrong."),
			"hint":           str("How to fix it, when the caller can."),
			"retryable":      {Type: "boolean", Description: "True only for transient failures worth trying again."},
			"tool":           str("The tool the error is about."),
			"path":           str("JSON pointer into the tool arguments (E_TOOL_ARGS)."),
			"allowed_values": {Type: "array", Description: "The closed set the argument must be one of (E_TOOL_ARGS)."},
			"rule":           str("The policy rule that denied the call (E_TOOL_DENIED)."),
		},
		PropertyOrder: []string{"code", "message", "hint", "retryable", "tool", "path", "allowed_values", "rule"},
		Required:      []string{"code", "message"},
	}
}

// resultSchema describes sandbox.Result, run_code's structured output.
func resultSchema() *jsonschema.Schema {
	integer := func(d string) *jsonschema.Schema { return &jsonschema.Schema{Type: "integer", Description: d} }
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"ok":     {Type: "boolean", Description: "True when the program returned normally."},
			"result": {Description: "The program's return value; null when it failed."},
			"logs":   {Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: "Captured console output, one entry per call."},
			"calls": {
				Type:        "object",
				Description: "The tool calls the program made.",
				Properties: map[string]*jsonschema.Schema{
					"total":   integer("Calls attempted."),
					"ok":      integer("Calls that succeeded."),
					"failed":  integer("Calls that failed."),
					"denied":  integer("Calls the policy denied."),
					"by_tool": {Type: "object", AdditionalProperties: &jsonschema.Schema{Type: "integer"}, Description: "Calls per tool."},
				},
				PropertyOrder: []string{"total", "ok", "failed", "denied", "by_tool"},
				Required:      []string{"total", "ok", "failed", "denied", "by_tool"},
			},
			"truncated":   {Type: "boolean", Description: "True when logs went past their budget and were cut."},
			"duration_ms": {Type: "number", Description: "Wall time of the run."},
			"run_id":      {Type: "string", Description: "Identifies the run in the audit trail."},
			"error":       errorSchema(),
		},
		PropertyOrder: []string{"ok", "result", "logs", "calls", "truncated", "duration_ms", "run_id", "error"},
		Required:      []string{"ok", "result", "logs", "calls", "truncated", "duration_ms", "run_id"},
	}
}
