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
			"reason": {Type: "string", Enum: []any{"invalid_input", "transient", "unavailable", "denied"},
				Description: "What kind of tool failure."},
		},
		PropertyOrder: []string{"code", "message", "hint", "retryable", "tool", "path", "allowed_values", "rule", "reason"},
		Required:      []string{"code", "message"},
	}
}

// planSchema describes sandbox.Plan: what a program named before it ran.
func planSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:        "object",
		Description: "The tools the program names (at the first line naming each), read before it ran.",
		Properties: map[string]*jsonschema.Schema{
			"tools": {Type: "array", Items: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
				"name": {Type: "string"}, "line": {Type: "integer"}}, Required: []string{"name"}}},
			"dynamic": {Type: "integer", Description: "Tool names computed at run time."},
			"imports": {Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: "A WebAssembly module's imports."},
		},
		PropertyOrder: []string{"tools", "dynamic", "imports"},
		Required:      []string{"tools", "dynamic"},
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
					"total":     integer("Calls attempted."),
					"ok":        integer("Calls that succeeded."),
					"failed":    integer("Calls that failed."),
					"denied":    integer("Calls the policy denied."),
					"by_tool":   {Type: "object", AdditionalProperties: &jsonschema.Schema{Type: "integer"}, Description: "Calls per tool."},
					"retries":   integer("Extra attempts after transient failures (not in total)."),
					"truncated": integer("Calls whose output was cut to its budget by whole items."),
				},
				PropertyOrder: []string{"total", "ok", "failed", "denied", "by_tool", "retries", "truncated"},
				Required:      []string{"total", "ok", "failed", "denied", "by_tool"},
			},
			"truncated":   {Type: "boolean", Description: "True when the logs or the result went past their budget and were cut."},
			"duration_ms": {Type: "number", Description: "Wall time of the run."},
			"run_id":      {Type: "string", Description: "Identifies the run in the audit trail."},
			"error":       errorSchema(),
			"partial":     {Description: "When the run failed (a timeout, say): the last value the program stored with progress(value)."},
			"output_ref": {Type: "string",
				Description: "When the result was cut: result is the first page of its JSON text; read_output(output_ref, output_next_offset) returns the rest."},
			"output_bytes":       integer("Size of the whole result's JSON text, when it was cut."),
			"output_next_offset": integer("Where the page in result ends: the offset for read_output."),
			"logs_ref": {Type: "string",
				Description: "When the logs were cut: read_output(logs_ref, logs_next_offset) returns the rest, one entry per line."},
			"logs_bytes":       integer("Size of the whole console output text, when the logs were cut."),
			"logs_next_offset": integer("Where what logs shows ends in that text: the offset for read_output."),
			"plan":             planSchema(),
		},
		PropertyOrder: []string{"ok", "result", "logs", "calls", "truncated", "duration_ms", "run_id", "error",
			"partial", "output_ref", "output_bytes", "output_next_offset", "logs_ref", "logs_bytes", "logs_next_offset", "plan"},
		Required: []string{"ok", "result", "logs", "calls", "truncated", "duration_ms", "run_id"},
	}
}
