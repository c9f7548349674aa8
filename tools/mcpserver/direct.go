package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// directTool builds the MCP tool serving t to direct callers.
//
// MCP wants structured content to be an object. A tool whose output schema
// is an object schema returns its result as is; any other tool (an array, a
// number, or an undescribed result) returns {"result": <value>}, and its
// output schema is wrapped the same way.
func (s *Server) directTool(t *tools.Tool) (toolDef, error) {
	in := t.InputSchema
	if in == nil {
		in = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	}
	if in.Type != "object" {
		return toolDef{}, errors.New("input schema is not of type object")
	}
	wrap := !isObjectSchema(t.OutputSchema)
	out := t.OutputSchema
	if wrap {
		out = wrapSchema(t.OutputSchema)
	}
	name := t.Name
	mt := &mcp.Tool{
		Name:         name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  in,
		OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{
			Title:           t.Title,
			ReadOnlyHint:    t.Effects.ReadOnly,
			DestructiveHint: ptr(t.Effects.Destructive),
			IdempotentHint:  t.Effects.Idempotent,
			OpenWorldHint:   ptr(t.Effects.OpenWorld),
		},
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := s.callContext(ctx, req)
		defer cancel()
		args := req.Params.Arguments
		if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
			args = json.RawMessage("{}")
		}
		res, err := s.broker.Direct(ctx, bindings.DirectCall{Principal: s.principalFor(req), Tool: name, Args: args,
			Approver: sessionApprover{req.Session}})
		if err != nil {
			return errorResult(sandbox.AsError(err, sandbox.EToolFailed)), nil
		}
		if wrap {
			b, err := json.Marshal(struct {
				Result json.RawMessage `json:"result"`
			}{res})
			if err != nil {
				s.log.Warn("mcpserver: tool returned invalid JSON", "tool", name)
				return errorResult(&sandbox.Error{Code: sandbox.EToolFailed, Tool: name, Message: "tool " + name + " returned invalid JSON"}), nil
			}
			return jsonResult(b, false), nil
		}
		if !isJSONObject(res) {
			s.log.Warn("mcpserver: tool result does not match its object output schema", "tool", name)
			return errorResult(&sandbox.Error{Code: sandbox.EToolFailed, Tool: name,
				Message: "tool " + name + " returned a result that does not match its output schema"}), nil
		}
		return jsonResult(res, false), nil
	}
	return toolDef{tool: mt, handler: h}, nil
}

func isObjectSchema(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	if s.Type == "object" {
		return true
	}
	return len(s.Types) == 1 && s.Types[0] == "object"
}

// wrapSchema returns {"type":"object","properties":{"result":s},"required":["result"]},
// hoisting s's $defs to the root so that "#/$defs/..." references still
// resolve.
func wrapSchema(s *jsonschema.Schema) *jsonschema.Schema {
	inner := &jsonschema.Schema{}
	var defs, definitions map[string]*jsonschema.Schema
	if s != nil {
		c := *s
		defs, definitions = c.Defs, c.Definitions
		c.Defs, c.Definitions = nil, nil
		c.Schema, c.ID = "", ""
		inner = &c
	}
	if inner.Description == "" {
		inner.Description = "The tool's result."
	}
	return &jsonschema.Schema{
		Type:        "object",
		Defs:        defs,
		Definitions: definitions,
		Properties:  map[string]*jsonschema.Schema{"result": inner},
		Required:    []string{"result"},
	}
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}
