package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// runCodeArgs are the arguments of run_code.
type runCodeArgs struct {
	Code         string          `json:"code"`
	Language     string          `json:"language"`
	ModuleBase64 string          `json:"module_base64"`
	ModuleSHA256 string          `json:"module_sha256"`
	Input        json.RawMessage `json:"input"`
	TimeoutMS    *float64        `json:"timeout_ms"`
}

func (s *Server) maxTimeoutMS() int64 { return s.runner.Limits().Timeout.Milliseconds() }

// runCodeTool builds run_code's definition for the current bindings.
func (s *Server) runCodeTool() toolDef {
	maxMS := float64(s.maxTimeoutMS())
	one := 1.0
	in := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"code": {Type: "string", Description: "The program: the body of an async function."},
			"language": {Type: "string", Enum: []any{"javascript", "typescript", "wasm"}, Default: json.RawMessage(`"javascript"`),
				Description: "Language of the program: javascript (the default); typescript and wasm only where the server enables them."},
			"module_base64": {Type: "string", Description: "A WebAssembly module, base64-encoded (language \"wasm\")."},
			"module_sha256": {Type: "string", Pattern: "^[0-9a-f]{64}$",
				Description: "Instead of module_base64: the lower-case hex SHA-256 of a module sent before (language \"wasm\")."},
			"input": {Description: "Any JSON value; the program sees it as `input`."},
			"timeout_ms": {Type: "integer", Minimum: &one, Maximum: &maxMS,
				Description: fmt.Sprintf("Wall-time limit of this run in milliseconds; default and maximum %d.", int64(maxMS))},
		},
		PropertyOrder:        []string{"code", "language", "module_base64", "module_sha256", "input", "timeout_ms"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	return toolDef{
		tool: &mcp.Tool{
			Name:         RunCodeName,
			Title:        "Run code",
			Description:  s.runCodeDescription(s.principal),
			InputSchema:  in,
			OutputSchema: resultSchema(),
			Annotations:  s.runCodeAnnotations(s.principal),
		},
		handler: s.handleRunCode,
	}
}

func ptr[T any](v T) *T { return &v }

// runCodeAnnotations derives run_code's hints from the tools a program of
// p can call: read-only when all of them are, destructive or open-world
// when any of them is. Refresh recomputes them when the catalog or policy
// changes.
func (s *Server) runCodeAnnotations(p bindings.Principal) *mcp.ToolAnnotations {
	readOnly, destructive, openWorld := true, false, false
	for _, t := range s.broker.Exposed(tools.Code, p) {
		readOnly = readOnly && t.Effects.ReadOnly
		destructive = destructive || t.Effects.Destructive
		openWorld = openWorld || t.Effects.OpenWorld
	}
	return &mcp.ToolAnnotations{Title: "Run code", ReadOnlyHint: readOnly,
		DestructiveHint: ptr(destructive), OpenWorldHint: ptr(openWorld)}
}

// runCodeDescription explains the guest API and lists the bindings p's
// programs can call compactly, or, when they are too many, their families
// and how to find them (see Config.ListThreshold).
func (s *Server) runCodeDescription(p bindings.Principal) string {
	bound := s.broker.Exposed(tools.Code, p)
	lim := s.runner.Limits()
	var b strings.Builder
	b.WriteString("Run a program in a sandbox; it calls tools and only its result comes back. " +
		"Use it to chain, loop over, fan out, filter or aggregate tool calls in one step.\n\n" +
		"The code is the body of an async function: use top-level `await` and `return` a JSON value. " +
		"Globals: `tools.<name>(args)` returns a Promise of the tool's result; `tools.call(name, args)`; " +
		"`input` (the input argument); `console.log` (captured in logs); " +
		"`progress(value)` saves a JSON snapshot of the work so far, returned as `partial` if the run then fails (a timeout, say). " +
		"A failed call rejects with a ToolError {code, message, hint}; catch it, or the run fails with its code. " +
		"No require/import, fetch, timers, eval or filesystem; each run starts fresh, but `await state.get(key)` / `state.set(key, value, {ttl_s})` / " +
		"`state.delete(key)` / `state.keys(prefix)` keep JSON values between your runs. The result's `plan` lists the tools the program names.\n")
	fmt.Fprintf(&b, "Limits: %s per run, %d tool calls, %d KiB result (a larger one comes back cut, with output_ref for %s).\n",
		lim.Timeout, lim.MaxCalls, lim.MaxResultBytes>>10, ReadOutputName)
	s.writeBindings(&b, bound) // listing.go
	return b.String()
}

// clip shortens s to at most n bytes at a word boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n-len("…")], ' ')
	if cut <= 0 {
		return sandbox.Cap(s, n)
	}
	return s[:cut] + "…"
}

// exampleProgram is a one-line program calling a bound tool, with the
// arguments of the tool's first worked example when it has one.
func exampleProgram(bound []*tools.Tool) string {
	for _, t := range bound {
		if len(t.Examples) > 0 && len(t.Examples[0].Args) > 0 && len(t.Examples[0].Args) < 200 {
			var c bytes.Buffer
			if json.Compact(&c, t.Examples[0].Args) == nil {
				return fmt.Sprintf("const r = await tools.%s(%s); return r;", t.Name, c.String())
			}
		}
	}
	t := bound[0]
	return fmt.Sprintf("const rs = await Promise.all(input.map((a) => tools.%s(a))); return rs.length;", t.Name)
}

// handleRunCode is run_code's handler.
func (s *Server) handleRunCode(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	prog, sha, lim, aerr := s.decodeRunCode(req.Params.Arguments)
	if aerr != nil {
		return s.runFailure(aerr), nil
	}
	ctx, cancel := s.callContext(ctx, req)
	defer cancel()

	principal := s.principalFor(req)
	rr := bindings.RunRequest{Program: prog, ModuleSHA256: sha, Limits: lim, Principal: principal,
		Approver: sessionApprover{req.Session}}
	if resumable(req) { // approvals without a session (approvalstate.go)
		rr.Approver = nil
		if e := s.prepareResume(ctx, req, &rr); e != nil {
			return s.runFailure(e), nil
		}
	}
	var pr *bindings.ProgressThrottle
	if tok := req.Params.GetProgressToken(); tok != nil && s.progress > 0 && req.Session != nil {
		pr = newProgressReporter(ctx, req.Session, tok, s.progress)
		rr.Progress = pr.Update
		defer pr.Stop() // also when Run panics (s.safe answers E_INTERNAL)
	}
	res, susp := s.runner.RunResumable(ctx, rr)
	if pr != nil {
		pr.Stop() // no progress after the response
	}
	if susp != nil {
		return s.inputRequired(ctx, &rr, susp), nil
	}
	if res.Whole != nil {
		// The result was cut to its first page: keep the whole for
		// read_output. If the store cannot take it, the page stands alone.
		if ref, ok := s.keepOutput(ctx, principal.ID, res.Whole, res.Meta); ok {
			res.OutputRef = ref
		}
		res.Whole = nil
	}
	if res.WholeLogs != nil {
		if ref, ok := s.keepOutput(ctx, principal.ID, res.WholeLogs, res.Meta); ok {
			res.LogsRef = ref
		}
		res.WholeLogs = nil
	}
	return withMeta(s.runResult(res), res.Meta), nil
}

// runResult is the MCP form of a run: the Result as structured content and
// as compact JSON text; isError when the program failed.
func (s *Server) runResult(res *sandbox.Result) *mcp.CallToolResult {
	b, err := marshalText(res)
	if err != nil {
		s.log.Error("mcpserver: result does not marshal", "run_id", res.RunID, "err", err)
		if res.Error != nil && res.Error.Code == sandbox.EInternal {
			return errorResult(internalError()) // cannot recurse
		}
		return s.runFailure(internalError())
	}
	return jsonResult(b, !res.OK)
}

// marshalText is json.Marshal without HTML escaping, for the text a model
// reads: json.Marshal turns each <, > and & (in the result's own JSON too)
// into a six-byte \u003c escape, so HTML-like text would cost up to six
// times the result budget.
func marshalText(v any) ([]byte, error) { return sandbox.MarshalJSON(v) }

// decodeRunCode checks run_code's arguments. A problem is an E_TOOL_ARGS
// error (E_MODULE_INVALID for a module that is not base64) the model can fix.
func (s *Server) decodeRunCode(raw json.RawMessage) (p sandbox.Program, sha string, lim sandbox.Limits, _ *sandbox.Error) {
	var a runCodeArgs
	bad := func(path, msg, hint string) *sandbox.Error {
		return &sandbox.Error{Code: sandbox.EToolArgs, Tool: RunCodeName, Path: path,
			Message: sandbox.Cap(msg, sandbox.MaxMessageBytes), Hint: hint}
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		msg := "arguments must be an object with code, language, module_base64, input and timeout_ms"
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return p, sha, lim, bad("/"+ute.Field, fmt.Sprintf("argument %s has the wrong type (%s)", ute.Field, ute.Value),
				"See run_code's input schema.")
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return p, sha, lim, bad("", "unknown argument "+sandbox.Cap(f, 80), "Use only code, language, module_base64, module_sha256, input and timeout_ms.")
		}
		return p, sha, lim, bad("", msg, "See run_code's input schema.")
	}
	switch a.Language {
	case "", "javascript", "js":
		p.Language = sandbox.JavaScript
	case "typescript", "ts":
		p.Language = sandbox.TypeScript
	case "wasm":
		p.Language = sandbox.WASM
	default:
		e := bad("/language", "unknown language "+strconv.Quote(sandbox.Cap(a.Language, 40)), "Use javascript, typescript or wasm.")
		e.AllowedValues = []any{"javascript", "typescript", "wasm"}
		return p, sha, lim, e
	}
	if p.Language == sandbox.WASM {
		sha = a.ModuleSHA256
		if sha != "" && !isSHA256Hex(sha) {
			return p, sha, lim, bad("/module_sha256", "module_sha256 is not a lower-case hex SHA-256", "Send 64 lower-case hex digits, or the module itself in module_base64.")
		}
		if a.ModuleBase64 == "" && sha == "" {
			return p, sha, lim, bad("/module_base64", "language wasm needs module_base64 or module_sha256",
				"Send the module, base64-encoded, in module_base64 (afterwards its SHA-256 in module_sha256 is enough).")
		}
		if a.Code != "" {
			return p, sha, lim, bad("/code", "language wasm takes module_base64, not code", "Leave code empty, or choose language javascript.")
		}
		max := s.runner.Limits().MaxModuleBytes
		// With module_sha256 alone, the runner finds the module.
		if a.ModuleBase64 != "" {
			if base64.StdEncoding.DecodedLen(len(a.ModuleBase64)) > max+3 {
				return p, sha, lim, &sandbox.Error{Code: sandbox.EModuleLimit, Tool: RunCodeName,
					Message: fmt.Sprintf("the module is over %d bytes", max), Hint: "Make the module smaller."}
			}
			m, err := base64.StdEncoding.DecodeString(a.ModuleBase64)
			if err != nil {
				return p, sha, lim, &sandbox.Error{Code: sandbox.EModuleInvalid, Tool: RunCodeName, Path: "/module_base64",
					Message: "module_base64 is not valid base64", Hint: "Encode the module with standard base64 (RFC 4648, with padding)."}
			}
			p.Module = m
		}
	} else {
		if strings.TrimSpace(a.Code) == "" {
			return p, sha, lim, bad("/code", "code is required", "Send the program in code: the body of an async function that returns the result.")
		}
		if a.ModuleBase64 != "" || a.ModuleSHA256 != "" {
			return p, sha, lim, bad("/module_base64", "module_base64 and module_sha256 are only for language wasm", "Leave them empty.")
		}
		p.Source = a.Code
	}
	if len(a.Input) > 0 {
		p.Input = a.Input
	}
	if a.TimeoutMS != nil {
		v, max := *a.TimeoutMS, s.maxTimeoutMS()
		if v != float64(int64(v)) || v < 1 || v > float64(max) {
			return p, sha, lim, bad("/timeout_ms", fmt.Sprintf("timeout_ms must be an integer from 1 to %d", max),
				fmt.Sprintf("Omit timeout_ms for the default (%d ms), or pass a smaller value.", max))
		}
		lim.Timeout = time.Duration(v) * time.Millisecond
	}
	return p, sha, lim, nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
