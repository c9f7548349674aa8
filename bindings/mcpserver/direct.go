package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

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
//
// A DirectRaw tool (a proxy of an upstream MCP server) returns a whole
// CallToolResult, served as is: content blocks, structuredContent and
// isError as the upstream sent them (plus the broker's notes, if any). Its
// listed output schema is the upstream's own: OutputSchema if it is an
// object schema, wrapped as above if it is another (the value inside the
// upstream's {"result": v}), and none if OutputSchema is nil, so that
// clients that check structured content against the listed schema (the
// TypeScript SDK does) see the schema the upstream's results were written
// for.
func (s *Server) directTool(t *tools.Tool) (toolDef, error) { return s.directToolAs(t, t.Name) }

// directToolAs is directTool served under name: t.Name, or one of its
// deprecated aliases (the broker resolves it).
func (s *Server) directToolAs(t *tools.Tool, name string) (toolDef, error) {
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
	if wrap && (!t.DirectRaw || t.OutputSchema != nil) {
		out = wrapSchema(t.OutputSchema)
	}
	raw := t.DirectRaw
	mt := &mcp.Tool{
		Name:        name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: in,
		Annotations: &mcp.ToolAnnotations{
			Title:           t.Title,
			ReadOnlyHint:    t.Effects.ReadOnly,
			DestructiveHint: ptr(t.Effects.Destructive),
			IdempotentHint:  t.Effects.Idempotent,
			OpenWorldHint:   ptr(t.Effects.OpenWorld),
		},
	}
	if out != nil {
		mt.OutputSchema = out
	}
	h := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := s.callContext(ctx, req)
		defer cancel()
		args := req.Params.Arguments
		if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
			args = json.RawMessage("{}")
		}
		dc := bindings.DirectCall{Principal: s.principalFor(req), Tool: name, Args: args,
			Approver: sessionApprover{req.Session}}
		if resumable(req) { // approvals without a session (approvalstate.go)
			if e := s.prepareDirectResume(ctx, req, &dc); e != nil {
				return errorResult(e), nil
			}
		}
		out, err := s.broker.DirectOutcome(ctx, dc)
		if err != nil {
			return errorResult(sandbox.AsError(err, sandbox.EToolFailed)), nil
		}
		if out.Suspension != nil {
			return s.directInputRequired(ctx, dc.Principal, name, args, out.Suspension), nil
		}
		res := out.Result
		if name == bindings.SearchToolsName {
			if note := s.revealFound(req.Session, res); note != "" {
				out.Notes = append(out.Notes, note)
			}
		}
		if raw {
			var r mcp.CallToolResult
			if err := json.Unmarshal(res, &r); err != nil {
				s.log.Warn("mcpserver: tool returned an invalid MCP result", "tool", name)
				return errorResult(&sandbox.Error{Code: sandbox.EToolFailed, Tool: name, Message: "tool " + name + " returned an invalid MCP result"}), nil
			}
			if r.IsError {
				markUpstreamError(ctx)
			}
			return withNotes(&r, out), nil
		}
		if wrap {
			b, err := marshalText(struct {
				Result json.RawMessage `json:"result"`
			}{res})
			if err != nil {
				s.log.Warn("mcpserver: tool returned invalid JSON", "tool", name)
				return errorResult(&sandbox.Error{Code: sandbox.EToolFailed, Tool: name, Message: "tool " + name + " returned invalid JSON"}), nil
			}
			return withNotes(jsonResult(b, false), out), nil
		}
		if name == bindings.DescribeToolsName {
			return withNotes(describeResult(res), out), nil
		}
		if !isJSONObject(res) {
			s.log.Warn("mcpserver: tool result does not match its object output schema", "tool", name)
			return errorResult(&sandbox.Error{Code: sandbox.EToolFailed, Tool: name,
				Message: "tool " + name + " returned a result that does not match its output schema"}), nil
		}
		return withNotes(jsonResult(res, false), out), nil
	}
	return toolDef{tool: mt, handler: h}, nil
}

// withNotes adds the broker's notes about a direct call (its output was cut
// by whole items, or it used a deprecated name) to the call's result: one
// text block each after the result's JSON, for the model, and the same
// facts in _meta ("truncated", "next_action") for programs. The structured
// content is left as the tool's output schema describes it.
func withNotes(r *mcp.CallToolResult, o bindings.DirectResult) *mcp.CallToolResult {
	for _, n := range o.Notes {
		r.Content = append(r.Content, &mcp.TextContent{Text: n})
	}
	if len(o.Meta) > 0 {
		r.Meta = mcp.Meta{}
		for k, v := range o.Meta {
			r.Meta[k] = v
		}
	}
	return r
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

// describeResult is describe_tools' result over MCP: the declarations as a
// plain TypeScript text block (what a model reads best, not escaped inside
// JSON), with the unknown and omitted names and the hint as comments after
// it, and the whole answer as structured content.
func describeResult(res json.RawMessage) *mcp.CallToolResult {
	var d bindings.DescribeResult
	if err := json.Unmarshal(res, &d); err != nil {
		return jsonResult(res, false)
	}
	text := d.Declarations
	if len(d.Unknown) > 0 {
		text += "\n\n// Unknown (not tools you may call): " + strings.Join(d.Unknown, ", ")
	}
	if len(d.Omitted) > 0 {
		text += "\n\n// Omitted (too large for one answer): " + strings.Join(d.Omitted, ", ")
	}
	if d.Hint != "" {
		text += "\n\n// " + d.Hint
	}
	return &mcp.CallToolResult{StructuredContent: res, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
