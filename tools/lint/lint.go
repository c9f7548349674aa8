// Package lint checks tool definitions against sandcall's catalog standard,
// the one `sandcall tools lint` applies to every tool a catalog serves.
//
// The standard asks of each tool:
//
//   - a name in snake case, `<family>_<verb>` or a plain verb phrase
//     (get_expenses, github_create_issue, ping), without a brand prefix;
//   - a description that opens with the question the tool answers (or a
//     verb phrase saying what it returns), says when not to use it and which
//     tool to use instead, and carries at least one worked example;
//   - an input schema that is an object closed with additionalProperties:
//     false, lists its required properties, describes each property, and
//     uses a closed enum wherever the set of values is known;
//   - an output schema, an output budget, and declared effects (read-only,
//     destructive, idempotent).
//
// Lint is pure: it reads a *tools.Tool and returns Findings. Each Finding
// names a Rule by its stable ID (see Rules), with a level: an error is a
// definition that is wrong or unusable as written (exit 1 in the CLI), a
// warning one that serves models less well than it could. Prose rules are
// heuristics, documented on each rule; they accept plain descriptions
// without keyword stuffing:
//
//   - "opens with a question": the first sentence ends with '?', or its first
//     word is a verb such as Returns, Lists, Finds, Checks (any form);
//   - "says when not to use it": the description contains "do not use",
//     "don't use", "not for" or "instead";
//   - "a worked example": Tool.Examples is not empty, or the description
//     contains "Example:".
package lint

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/tools"
)

// Level is the severity of a Finding.
type Level string

// The two levels.
const (
	Error   Level = "error"
	Warning Level = "warning"
)

// Finding is one departure of a tool from the standard.
type Finding struct {
	Tool    string `json:"tool"`
	Rule    string `json:"rule"` // a stable Rule.ID
	Level   Level  `json:"level"`
	Message string `json:"message"`
	Hint    string `json:"hint"` // the rule's one-line fix
	// Pos is "file:line" of the tool's definition (Tool.Pos), or empty.
	Pos string `json:"pos,omitempty"`
}

// String formats f as "pos: level: tool: message [rule]".
func (f Finding) String() string {
	s := fmt.Sprintf("%s: %s: %s [%s]", f.Level, f.Tool, f.Message, f.Rule)
	if f.Pos != "" {
		s = f.Pos + ": " + s
	}
	return s
}

// Rule is one check of the standard.
type Rule struct {
	ID    string
	Level Level
	// Hint is a one-line fix.
	Hint string
}

// Rules lists every rule, by ID. The IDs are stable: scripts may match on
// them.
var Rules = []Rule{
	{"name-form", Error, "Name the tool in snake case: lower-case letters, digits and single underscores, starting with a letter, at most 64 characters."},
	{"name-brand", Error, "Drop the brand prefix: name the tool for what it does (get_expenses), not for who ships it."},
	{"name-verb", Warning, "Name the tool <family>_<verb> or as a verb phrase (get_expenses, github_create_issue), so the name says what it does."},
	{"desc-missing", Error, "Write a description of at least a sentence: the question the tool answers, when not to use it, an example."},
	{"desc-opening", Warning, "Open the description with the question the tool answers (\"Who is on a team?\") or what it returns (\"Returns ...\")."},
	{"desc-when-not", Warning, "Say when not to use the tool and what to use instead: \"Do not use for X (use other_tool instead).\""},
	{"desc-example", Warning, "Add a worked example: Tool.Examples with real arguments (and result), or \"Example: ...\" in the description."},
	{"example-args", Error, "Fix the example's arguments so that they match the input schema: models copy examples."},
	{"schema-type", Error, "Make the input schema an object: {\"type\": \"object\", \"properties\": {...}}."},
	{"schema-closed", Error, "Close the input schema: \"additionalProperties\": false at the root, so misspelt arguments are rejected, not ignored."},
	{"schema-required", Warning, "List the arguments a call needs in \"required\" at the root (the typed Go tools derive it from fields without omitempty)."},
	{"schema-described", Warning, "Describe every property (its meaning, unit and format), e.g. with a jsonschema struct tag."},
	{"schema-subset", Warning, "Keep to the keywords sandcall validates itself (see tools/validate.go), or accept that jsonschema-go validates this tool's arguments: over ten times slower per call, with less specific errors."},
	{"schema-enum", Warning, "The property's description lists its values: make them a closed enum (an enum struct tag), so bad values are rejected with the allowed ones."},
	{"output-schema", Warning, "Describe the result with an output schema (typed Go tools derive it from the result type)."},
	{"output-budget", Warning, "Set Tool.OutputBudget to the bytes a result may reasonably take, so one call cannot flood a program or the model."},
	{"effects", Warning, "Declare the tool's effects: Effects{ReadOnly, Destructive, Idempotent}, or Effects{Declared: true} for a write that is neither."},
	{"effects-conflict", Error, "A tool cannot be both read-only and destructive: fix Effects."},
	// Rules of an OpenAPI spec (package openapi reports them, at the
	// spec's file:line): what in an operation makes a poor tool.
	{"openapi-operation-id", Warning, "Give the operation an operationId: the tool is named after it (without one, after the method and path, which change when the path does)."},
	{"openapi-description", Warning, "Give the operation a summary and a description: they become the tool's description, which a model reads to choose it."},
	{"openapi-body-type", Warning, "Describe the request body with a typed schema (an object with typed properties), so a model knows what to send."},
	{"openapi-ref", Warning, "Keep every $ref inside the spec (#/components/...): references to other files or URLs are not followed, and the schema then accepts anything."},
	{"openapi-pattern", Warning, "Write patterns that Go's RE2 syntax compiles (no lookaround, no backreferences); others are not checked."},
}

// NewFinding returns a finding of the rule id (one of Rules) about tool,
// with the rule's level and hint. Sources that check more than a tool's
// definition (package openapi, for a spec) report with it.
func NewFinding(tool, id, pos, message string) Finding {
	r := rule(id)
	return Finding{Tool: tool, Rule: id, Level: r.Level, Message: message, Hint: r.Hint, Pos: pos}
}

// rule returns the rule with id; it panics on an unknown id (a bug here).
func rule(id string) Rule {
	for _, r := range Rules {
		if r.ID == id {
			return r
		}
	}
	panic("lint: unknown rule " + id)
}

// Brands are name prefixes that name a product rather than a tool family.
var Brands = []string{"sandcall", "mcp"}

// verbs are the verbs a tool name or a description's first word may use
// (base forms; Returns, Lists, Searches, Queries match too).
var verbs = map[string]bool{}

func init() {
	for _, v := range strings.Fields(`get list search find read write create update delete remove add set
		send run describe check compute count fetch ping echo lookup look query post put start stop cancel
		approve open close load save summarize convert validate calculate calc show resolve upload download
		move copy rename sync submit reply notify schedule book pay transfer refund tag label merge diff test
		build deploy install execute call explain translate generate plan rank compare analyze estimate
		forecast report export import archive publish subscribe watch poll wait retry return give tell answer
		retrieve fill format parse render sort filter group join split total sum measure inspect browse
		scan detect extract match classify score rate review grant revoke invite assign reopen edit
		patch append clear reset refresh evaluate map reduce greet say ask log print notify sleep
		lint approve decide authorize verify sign encrypt decrypt hash encode decode predict`) {
		verbs[v] = true
	}
}

// isVerb reports whether w (any case, any of the forms -s, -es, -ies) is
// one of verbs.
func isVerb(w string) bool {
	w = strings.ToLower(strings.Trim(w, ".,:;!?\"'`()"))
	if verbs[w] {
		return true
	}
	switch {
	case strings.HasSuffix(w, "ies") && verbs[w[:len(w)-3]+"y"]:
		return true
	case strings.HasSuffix(w, "es") && verbs[w[:len(w)-2]]:
		return true
	case strings.HasSuffix(w, "s") && verbs[w[:len(w)-1]]:
		return true
	}
	return false
}

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`) })

// Lint checks t against the standard. Findings come in the order of Rules.
func Lint(t *tools.Tool) []Finding {
	var out []Finding
	add := func(id, format string, args ...any) {
		r := rule(id)
		out = append(out, Finding{Tool: t.Name, Rule: id, Level: r.Level, Message: fmt.Sprintf(format, args...), Hint: r.Hint, Pos: t.Pos})
	}
	lintName(t.Name, add)
	lintDescription(t, add)
	lintSchema(t, add)
	if t.OutputSchema == nil {
		add("output-schema", "the result has no output schema")
	}
	if t.OutputBudget <= 0 {
		add("output-budget", "no output budget: one result may take the run's whole result limit")
	}
	if !t.Effects.Stated() {
		add("effects", "no effects declared: clients cannot tell whether the tool reads, writes or destroys")
	}
	if t.Effects.ReadOnly && t.Effects.Destructive {
		add("effects-conflict", "the tool is declared both read-only and destructive")
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return ruleIndex(a.Rule) - ruleIndex(b.Rule) })
	return out
}

func ruleIndex(id string) int {
	return slices.IndexFunc(Rules, func(r Rule) bool { return r.ID == id })
}

func lintName(name string, add func(id, format string, args ...any)) {
	if len(name) > 64 || !nameRE().MatchString(name) {
		add("name-form", "the name %q is not snake case", name)
		return
	}
	parts := strings.Split(name, "_")
	for _, b := range Brands {
		if parts[0] == b && len(parts) > 1 {
			add("name-brand", "the name starts with the brand %q", b)
		}
	}
	// <verb>_..., <family>_<verb>_... or a plain verb.
	if !isVerb(parts[0]) && (len(parts) < 2 || !isVerb(parts[1])) {
		add("name-verb", "the name %q does not say what the tool does with a verb (first or second word)", name)
	}
}

func lintDescription(t *tools.Tool, add func(id, format string, args ...any)) {
	d := strings.TrimSpace(t.Description)
	if len(d) < 20 {
		add("desc-missing", "the description is missing or shorter than a sentence (%d bytes)", len(d))
		return
	}
	first := firstSentence(d)
	if w := strings.Fields(first); !strings.HasSuffix(first, "?") && (len(w) == 0 || !isVerb(w[0])) {
		add("desc-opening", "the description opens with %q: neither a question nor a verb saying what the tool returns", clip(first, 60))
	}
	low := strings.ToLower(d)
	if !strings.Contains(low, "do not use") && !strings.Contains(low, "don't use") &&
		!strings.Contains(low, "not for") && !strings.Contains(low, "instead") {
		add("desc-when-not", "the description does not say when not to use the tool")
	}
	if len(t.Examples) == 0 && !strings.Contains(low, "example:") {
		add("desc-example", "no worked example (Tool.Examples is empty and the description has no \"Example:\")")
	}
	for i, ex := range t.Examples {
		args := ex.Args
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		if err := t.Validate(args); err != nil {
			add("example-args", "example %d does not match the input schema: %s", i+1, clip(err.Error(), 200))
		}
	}
}

// firstSentence returns d up to its first sentence end ('.', '?' or '!'
// before a space or the end) or line break, the '?' kept.
func firstSentence(d string) string {
	for i := 0; i < len(d); i++ {
		switch d[i] {
		case '\n':
			return strings.TrimSpace(d[:i])
		case '.', '?', '!':
			if i+1 == len(d) || d[i+1] == ' ' || d[i+1] == '\n' {
				return strings.TrimSpace(d[:i+1])
			}
		}
	}
	return d
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

var listsValues = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(one of|either)\b`) })

func lintSchema(t *tools.Tool, add func(id, format string, args ...any)) {
	s := t.InputSchema
	if s == nil {
		return // an empty, closed object (tools.Tool.InputSchema)
	}
	if s.Type != "object" && !slices.Contains(s.Types, "object") {
		add("schema-type", "the input schema's root is not an object")
		return
	}
	if !tools.IsFalseSchema(s.AdditionalProperties) {
		add("schema-closed", "the input schema's root does not set additionalProperties: false")
	}
	if len(s.Properties) > 0 && len(s.Required) == 0 {
		add("schema-required", "the input schema's root lists no required property")
	}
	if kw := tools.BeyondSubset(s); kw != "" {
		add("schema-subset", "the input schema uses %s, beyond the subset sandcall validates itself: jsonschema-go validates its arguments", kw)
	}
	walkProps(s, "", func(path string, p *jsonschema.Schema) {
		if p.Description == "" && p.Ref == "" {
			add("schema-described", "property %s has no description", path)
		}
		isString := p.Type == "string" || slices.Contains(p.Types, "string")
		if isString && len(p.Enum) == 0 && p.Const == nil && listsValues().MatchString(p.Description) {
			add("schema-enum", "property %s lists its values in its description but has no enum", path)
		}
	})
}

// walkProps calls f for every property under s (nested objects and array
// items included), with its JSON pointer.
func walkProps(s *jsonschema.Schema, path string, f func(string, *jsonschema.Schema)) {
	if s == nil || len(path) > 512 {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[k]
		if p == nil {
			continue
		}
		f(path+"/"+k, p)
		walkProps(p, path+"/"+k, f)
	}
	if s.Items != nil {
		walkProps(s.Items, path+"/items", f)
	}
}
