package programs

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// principalCall is the broker's CallContext (bindings.CallInfo): who a call
// is made for.
type principalCall interface{ PrincipalID() string }

const saveSchema = `{"type":"object","properties":{
"name":{"type":"string","pattern":"^[A-Za-z_][A-Za-z0-9_]{0,63}$","description":"The tool name the program is saved as (saving again under the same name replaces your program)."},
"description":{"type":"string","description":"What question the program answers and when to use it: the tool's description."},
"parameters":{"type":"object","description":"A JSON Schema of type object: the program's arguments, which it reads as args. Omit it for none."},
"code":{"type":"string","description":"The program, as run_code takes it: the body of an async function that reads args and returns the result."},
"language":{"type":"string","enum":["javascript"],"default":"javascript","description":"The language of code: JavaScript only."},
"read_only":{"type":"boolean","description":"The program changes nothing."},
"destructive":{"type":"boolean","description":"The program may delete or overwrite data."},
"idempotent":{"type":"boolean","description":"Calling it twice does what calling it once does."}},
"required":["name","description","code"],"additionalProperties":false}`

const saveOutput = `{"type":"object","properties":{
"name":{"type":"string"},"version":{"type":"string","description":"The first 12 hex digits of sha256."},
"sha256":{"type":"string"},"plan":{"type":"object","description":"The tools the program names ({tools: [{name, line}], dynamic})."},
"replaced":{"type":"string","description":"The version this save replaced."},"unchanged":{"type":"boolean"}},
"required":["name","version","sha256","plan"]}`

// SaveTool is the save_program tool over s: a model saves a program that
// worked as a tool of its own, callable in later sessions (and by other
// programs) by its principal only. The tool declares direct callers only
// (a person sees the save; a program cannot save programs), and the
// default policy asks a person to approve each call (rule
// default.approval).
func SaveTool(s *Saved) *tools.Tool {
	in, _ := tools.ParseSchema([]byte(saveSchema))
	out, _ := tools.ParseSchema([]byte(saveOutput))
	return &tools.Tool{
		Name:  SaveToolName,
		Title: "Save a program as a tool",
		Description: "Save a program that worked as a tool of its own, to call later by name — directly, or from run_code as tools.<name>(args) — " +
			"in this and later sessions. It runs as its caller, with the caller's rights. " +
			"A person approves each save; saving a changed program under the same name is a new version, approved again. " +
			"Do not use it for a program that has not run successfully with run_code yet, or for a one-off question (run it with run_code instead).",
		InputSchema:  in,
		OutputSchema: out,
		Examples: []tools.Example{{
			Description: "Save the travel-budget check as a tool taking the quarter.",
			Args: json.RawMessage(`{"name":"travel_overruns","description":"Which engineers went over their travel budget in a quarter?",` +
				`"parameters":{"type":"object","properties":{"quarter":{"type":"string"}},"required":["quarter"]},"read_only":true,` +
				`"code":"const team = await tools.get_team_members({department: \"engineering\"}); return team.length;"}`),
			Result: json.RawMessage(`{"name":"travel_overruns","version":"3f0a61c2d9b4","sha256":"3f0a61c2d9b4…","plan":{"tools":[{"name":"get_team_members","line":1}],"dynamic":0}}`),
		}},
		OutputBudget:   16 << 10,
		Effects:        tools.Effects{Idempotent: true, Declared: true},
		AllowedCallers: []tools.Caller{tools.Direct},
		Handler: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			cc, ok := tools.CallFrom(ctx)
			pc, ok2 := cc.(principalCall)
			if !ok || !ok2 {
				return nil, tools.ToolError(sandbox.EInternal, "save_program needs the broker's call context", "")
			}
			var req SaveRequest
			dec := json.NewDecoder(bytes.NewReader(args))
			if err := dec.Decode(&req); err != nil {
				return nil, tools.ArgError("", "the arguments are not save_program's", "See save_program's input schema.")
			}
			res, err := s.Save(ctx, pc.PrincipalID(), req)
			if err != nil {
				return nil, err
			}
			return sandbox.MarshalJSON(res)
		},
	}
}

// PlanOfSave reads a save_program call's arguments for an approval
// prompt: the program's name, version and plan; ok is false when they
// hold no program that parses.
func PlanOfSave(args json.RawMessage) (name, version string, pl sandbox.Plan, ok bool) {
	var req SaveRequest
	if json.Unmarshal(args, &req) != nil || req.Code == "" || len(req.Code) > MaxSourceBytes ||
		(req.Language != "" && req.Language != "javascript" && req.Language != "js") {
		return "", "", sandbox.Plan{}, false
	}
	lang := sandbox.JavaScript
	pl, err := planOf(lang, req.Code)
	if err != nil {
		return "", "", sandbox.Plan{}, false
	}
	return req.Name, (&Program{SHA256: hashSource(lang, req.Code)}).Version(), pl, true
}
