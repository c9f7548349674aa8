package bindings

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sandcall/sandcall/bindings/tsdecl"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

// The discovery tools' names (docs/mcp.md).
const (
	SearchToolsName   = "search_tools"
	DescribeToolsName = "describe_tools"
)

// Bounds of the discovery tools.
const (
	// DefaultSearchLimit and MaxSearchLimit bound search_tools' limit.
	DefaultSearchLimit = 10
	MaxSearchLimit     = 50
	// MaxDescribeNames caps the names of one describe_tools call.
	MaxDescribeNames = 20
	// MaxDescribeBytes caps the declarations of one describe_tools call;
	// tools past it are listed as omitted.
	MaxDescribeBytes = 64 << 10
)

// IsDiscovery reports whether name is one of the discovery tools, which
// never list or describe themselves.
func IsDiscovery(name string) bool { return name == SearchToolsName || name == DescribeToolsName }

// AddDiscovery adds the discovery tools, search_tools and describe_tools,
// to b's catalog. They are ordinary catalog tools (source builtin,
// read-only, idempotent): every call goes through the broker and its
// policy, from a program (tools.$search, tools.$describe, or a WASM guest)
// or directly. Each call shows only the tools its caller may call for its
// principal (Broker.Exposed, read from CallInfoFrom), never the discovery
// tools themselves nor deprecated aliases. The search index follows the
// catalog: it is rebuilt on the first search after a change.
//
// A direct caller (the model through MCP) sees the tools it may call
// directly or from a program; a program sees those it may call from code.
func AddDiscovery(b *Broker) error { return AddDiscoveryWith(b, search.Options{}) }

// AddDiscoveryWith is AddDiscovery with the search's options: an
// operator's word files and an embeddings reranker (search.Config's
// Options loads them from a configuration).
func AddDiscoveryWith(b *Broker, o search.Options) error {
	d := &discovery{b: b, live: search.NewLiveWith(b.Catalog(), o)}
	for _, t := range []*tools.Tool{d.searchTool(), d.describeTool()} {
		if err := b.Catalog().Add(t); err != nil {
			return err
		}
	}
	return nil
}

type discovery struct {
	b    *Broker
	live *search.Live
}

// visible returns the tools the call's caller may call, by name, with the
// callers that may call each.
func (d *discovery) visible(ctx context.Context) (map[string][]string, error) {
	info, ok := CallInfoFrom(ctx)
	if !ok {
		return nil, &sandbox.Error{Code: sandbox.EInternal, Message: "the discovery tools must be called through the broker"}
	}
	out := map[string][]string{}
	callers := []tools.Caller{tools.Code}
	if info.Caller == tools.Direct {
		callers = []tools.Caller{tools.Code, tools.Direct}
	}
	for _, c := range callers {
		for _, t := range d.b.Exposed(c, info.Principal) {
			if !IsDiscovery(t.Name) {
				out[t.Name] = append(out[t.Name], string(c))
			}
		}
	}
	return out, nil
}

type searchArgs struct {
	Query string `json:"query" minLength:"1" maxLength:"1024" jsonschema:"What the tool should do, in a few words: the action and the things it acts on, e.g. refund a store order or kubernetes pod logs."`
	Limit int    `json:"limit,omitempty" minimum:"1" maximum:"50" jsonschema:"How many tools to return at most. Default 10."`
}

// FoundTool is one tool in search_tools' answer.
type FoundTool struct {
	Name      string   `json:"name" jsonschema:"The tool's name: call it as tools.<name>(args) in a program."`
	Summary   string   `json:"summary" jsonschema:"The first sentence of the tool's description."`
	Signature string   `json:"signature" jsonschema:"One-line TypeScript signature; {…} marks types shown in full by describe_tools."`
	Callers   []string `json:"callers" jsonschema:"Who may call it: code (from a run_code program) and/or direct (as an MCP tool)."`
	Call      string   `json:"call" jsonschema:"How to reach it: await tools.<name>(args) from a run_code program, or, for a tool programs may not call, directly as the MCP tool <name>."`
}

// route says how a caller reaches a tool that callers may call: from a
// program when code may (the route that keeps results out of the model's
// context), else directly as an MCP tool. It is the first line of each
// describe_tools declaration, and search_tools' call field for a tool
// programs may not call (see searchCall).
func route(name string, callers []string) string {
	code, direct := false, false
	for _, c := range callers {
		code = code || c == string(tools.Code)
		direct = direct || c == string(tools.Direct)
	}
	switch {
	case code && direct:
		return "in a run_code program: await tools." + name + "(args); or directly as the MCP tool " + name
	case code:
		return "in a run_code program: await tools." + name + "(args)"
	case direct:
		return "directly as the MCP tool " + name + " (a person sees each call); programs may not call it"
	}
	return ""
}

// searchCall is search_tools' call field: route, short where a program
// may call the tool (callers says whether it may also be called
// directly), so that an answer of five tools stays small.
func searchCall(name string, callers []string) string {
	if slices.Contains(callers, string(tools.Code)) {
		return "await tools." + name + "(args)"
	}
	return route(name, callers)
}

// SearchResult is search_tools' answer.
type SearchResult struct {
	Tools []FoundTool `json:"tools" jsonschema:"The matching tools, best first; when confident is false, only the closest few."`
	// Confident is search.Result.Confident: false when no tool fits the
	// query well enough to be sure, and Tools are the closest few.
	Confident bool `json:"confident" jsonschema:"Whether the tools answer the query. False: none fits it well enough to be sure; tools are the closest few and families says where else to look."`
	Shown     int  `json:"shown" jsonschema:"How many tools are in tools."`
	Total     int  `json:"total" jsonschema:"How many tools matched in all; more than shown when limit cut the list."`
	Searched  int  `json:"searched" jsonschema:"How many tools you may call were searched."`
	// Families are the catalog's families when the answer is not
	// confident.
	Families []FoundFamily `json:"families,omitempty" jsonschema:"When confident is false: the tool families (servers) you may search; search one's name to list its tools."`
	Hint     string        `json:"hint,omitempty" jsonschema:"What to do next when nothing fits confidently or the list was cut."`
}

// FoundFamily is a family of tools in search_tools' answer.
type FoundFamily struct {
	Name  string `json:"name" jsonschema:"The family: an upstream server, or a name prefix several tools share."`
	Tools int    `json:"tools" jsonschema:"How many of its tools you may call."`
}

// maxFamilies caps the families of one answer; the rest are counted in
// the hint.
const maxFamilies = 40

func (d *discovery) searchTool() *tools.Tool {
	return tools.MustFunc(tools.Tool{
		Name:  SearchToolsName,
		Title: "Search tools",
		Description: "Finds the tools that can do a task, when there are too many tools to list: answers \"which tool " +
			"lists overdue invoices?\" with the best matches, each with its name, a one-line summary and a TypeScript " +
			"signature. Search by what the tool should do (an action and the things it acts on), then read the full " +
			"declarations of the ones you pick with describe_tools before calling them from a run_code program. " +
			"Searching a server's name (\"github\", \"what can the memory server do\") lists that server's tools.\n\n" +
			"Do not use it when run_code's description already lists the tool you need, or to fetch data: it searches " +
			"tool descriptions, not your data. confident: false means no tool fits well enough to be sure: the tools " +
			"are only the closest few, and families lists the servers you may search instead; try other words or a " +
			"family's name.\n\n" +
			"Example: search_tools({\"query\": \"restart kubernetes deployment\", \"limit\": 3}) → " +
			"{\"tools\": [{\"name\": \"k8s_rollout_restart\", \"summary\": \"Restart a deployment's pods.\", " +
			"\"signature\": \"k8s_rollout_restart(args: {namespace: string; deployment: string}): Promise<unknown>\", " +
			"\"callers\": [\"code\", \"direct\"], \"call\": \"await tools.k8s_rollout_restart(args)\"}], \"confident\": true, \"shown\": 1, \"total\": 1, \"searched\": 480}",
		Examples: []tools.Example{{
			Description: "find the tool that lists overdue invoices",
			Args:        []byte(`{"query":"overdue invoices for a customer","limit":3}`),
			Result: []byte(`{"tools":[{"name":"billing_list_invoices","summary":"List invoices, filtered by customer and status.",` +
				`"signature":"billing_list_invoices(args?: {customer_id?: string; status?: \"open\" | \"paid\" | \"overdue\"}): Promise<unknown>",` +
				`"callers":["code","direct"]}],"confident":true,"shown":1,"total":1,"searched":202}`),
		}},
		Effects:      tools.Effects{ReadOnly: true, Idempotent: true},
		OutputBudget: 64 << 10,
		Source:       "builtin",
	}, d.search)
}

func (d *discovery) search(ctx context.Context, a searchArgs) (SearchResult, error) {
	vis, err := d.visible(ctx)
	if err != nil {
		return SearchResult{}, err
	}
	limit := a.Limit
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, MaxSearchLimit)
	found := d.live.Index().Search(ctx, a.Query, limit, func(t *tools.Tool) bool { return vis[t.Name] != nil })
	res := SearchResult{Tools: make([]FoundTool, 0, len(found.Hits)), Confident: found.Confident, Total: found.Total, Searched: len(vis)}
	for _, h := range found.Hits {
		reportText(ctx, h.Tool) // its summary and signature are its server's text
		res.Tools = append(res.Tools, FoundTool{Name: h.Tool.Name, Summary: sandbox.Cap(strings.TrimSpace(h.Tool.Summary()), 300),
			Signature: tsdecl.Signature(h.Tool), Callers: vis[h.Tool.Name], Call: searchCall(h.Tool.Name, vis[h.Tool.Name])})
	}
	res.Shown = len(res.Tools)
	more := ""
	for i, f := range found.Families {
		if i == maxFamilies {
			more = fmt.Sprintf(" (%d more families not listed)", len(found.Families)-i)
			break
		}
		res.Families = append(res.Families, FoundFamily{Name: f.Name, Tools: f.Tools})
	}
	switch {
	case !found.Confident && res.Shown > 0:
		res.Hint = "No tool fits confidently: these are only the closest. Describe the action and the things it acts on in other words, " +
			"or search a family's name to list its tools" + more + "."
	case !found.Confident:
		res.Hint = "No tool matches. Describe the action and the things it acts on in other words (\"send a slack message\", \"list open invoices\"), " +
			"or search a family's name to list its tools" + more + "."
	case found.Total > res.Shown:
		res.Hint = fmt.Sprintf("%d more tools matched; raise limit or make the query more specific.", found.Total-res.Shown)
	default:
		res.Hint = "Read a tool's full declaration with describe_tools before you call it."
	}
	if notes := d.b.sourceNotes(); len(notes) > 0 {
		res.Hint = sandbox.Cap(res.Hint+" Not searched: "+strings.Join(notes, "; ")+".", 2<<10)
	}
	return res, nil
}

type describeArgs struct {
	Names []string `json:"names" minItems:"1" maxItems:"20" maxLength:"128" jsonschema:"Names of the tools to describe, as search_tools or run_code's description gives them."`
}

// DescribeResult is describe_tools' answer.
type DescribeResult struct {
	Declarations string   `json:"declarations" jsonschema:"TypeScript declarations of the tools, with JSDoc: what each does, its argument and result types, and worked examples. Call one as await tools.<name>(args) in a run_code program."`
	Described    []string `json:"described" jsonschema:"The tools declared."`
	Unknown      []string `json:"unknown,omitempty" jsonschema:"Names that are not tools you may call."`
	Omitted      []string `json:"omitted,omitempty" jsonschema:"Tools left out to keep the answer small; describe them in another call."`
	Hint         string   `json:"hint,omitempty" jsonschema:"What to do about unknown or omitted names."`
}

func (d *discovery) describeTool() *tools.Tool {
	return tools.MustFunc(tools.Tool{
		Name:  DescribeToolsName,
		Title: "Describe tools",
		Description: "Gives the full TypeScript declarations of the named tools: answers \"how do I call this tool and " +
			"what does it return?\" with each tool's description, argument type (required and optional properties, " +
			"enums as string unions, nested objects), result type (Promise<unknown> when the tool does not declare one) " +
			"and worked examples, as JSDoc. Use it after search_tools, before writing a run_code program that calls " +
			"the tools. At most 20 names per call.\n\n" +
			"Do not use it to find tools (use search_tools) or to call them (use run_code, or call a listed tool directly).\n\n" +
			"Example: describe_tools({\"names\": [\"get_expenses\"]}) → {\"declarations\": \"/** Lists a member's expenses " +
			"… */\\nget_expenses(args: {member_id: string; quarter: \\\"Q1\\\" | \\\"Q2\\\" | \\\"Q3\\\" | \\\"Q4\\\"}): " +
			"Promise<{amount: number; category: string}[]>;\", \"described\": [\"get_expenses\"]}",
		Examples: []tools.Example{{
			Description: "declare one tool",
			Args:        []byte(`{"names":["get_expenses"]}`),
			Result: []byte(`{"declarations":"/**\n * Lists a member's expenses for a quarter.\n */\nget_expenses(args: {\n  member_id: string;\n` +
				`  quarter: \"Q1\" | \"Q2\" | \"Q3\" | \"Q4\";\n}): Promise<{\n  amount: number;\n  category: string;\n}[]>;","described":["get_expenses"]}`),
		}},
		Effects:      tools.Effects{ReadOnly: true, Idempotent: true},
		OutputBudget: MaxDescribeBytes + 8<<10,
		Source:       "builtin",
	}, d.describe)
}

func (d *discovery) describe(ctx context.Context, a describeArgs) (DescribeResult, error) {
	if len(a.Names) == 0 {
		return DescribeResult{}, tools.ArgError("/names", "names must list at least one tool name",
			`Pass the names to describe, e.g. {"names": ["get_expenses"]}; find names with search_tools.`)
	}
	vis, err := d.visible(ctx)
	if err != nil {
		return DescribeResult{}, err
	}
	res := DescribeResult{Described: []string{}}
	var renamed []string
	var decls []string
	size := 0
	seen := map[string]bool{}
	for _, raw := range a.Names {
		name := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(raw), "tools."), "()")
		if seen[name] {
			continue
		}
		seen[name] = true
		t, alias, ok := d.b.Catalog().Resolve(name)
		if ok && alias.Name != "" && vis[t.Name] != nil {
			// A deprecated name: describe the tool under its own name.
			renamed = append(renamed, name+" is now "+t.Name)
			if seen[t.Name] {
				continue
			}
			seen[t.Name] = true
			name = t.Name
		} else if !ok || vis[name] == nil || t.Name != name {
			res.Unknown = append(res.Unknown, safeName(name))
			continue
		}
		decl := "// Call " + route(name, vis[name]) + ".\n" + tsdecl.Declaration(t)
		// Counted as the answer holds it: a JSON string, where quotes,
		// newlines and <, > escape to several bytes.
		n := jsonLen(decl)
		if size+n > MaxDescribeBytes {
			res.Omitted = append(res.Omitted, name)
			continue
		}
		size += n + len(`\n\n`)
		reportText(ctx, t) // its declaration is its server's text
		decls = append(decls, decl)
		res.Described = append(res.Described, name)
	}
	if len(res.Described) == 0 && len(res.Omitted) == 0 {
		return res, &sandbox.Error{Code: sandbox.EToolUnknown, Tool: DescribeToolsName,
			Message: fmt.Sprintf("no tool you may call is named %s", strings.Join(quoteAll(res.Unknown), ", ")),
			Hint:    "Find the tool's exact name with search_tools first."}
	}
	res.Declarations = strings.Join(decls, "\n\n")
	var hints []string
	if len(renamed) > 0 {
		hints = append(hints, "Renamed: "+strings.Join(renamed, ", ")+"; call the new names.")
	}
	if len(res.Unknown) > 0 {
		hints = append(hints, "Unknown names are not tools you may call; find the right names with search_tools.")
	}
	if len(res.Omitted) > 0 {
		hints = append(hints, "Omitted tools did not fit in this answer; describe them in another call.")
	}
	res.Hint = strings.Join(hints, " ")
	return res, nil
}

// jsonLen is the length of s encoded as a JSON string, quotes excluded.
func jsonLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b) - 2
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	if len(out) > 5 {
		out = append(out[:5], "…")
	}
	return out
}

// Pinner is an optional interface of an Authorizer: Pinned reports whether
// t must be listed as a direct MCP tool even when the catalog is too large
// to list every tool (bindings/mcpserver's Config.ListThreshold). Pinning never
// exposes a tool: a pinned tool is listed only when Exposes allows direct
// callers too. PolicyAuthorizer implements it with the policy's `pin: true`.
type Pinner interface {
	Pinned(t *tools.Tool, p Principal) bool
}

var _ Pinner = (*PolicyAuthorizer)(nil)

// Pinned implements Pinner: the rule that selects t says pin: true.
func (a *PolicyAuthorizer) Pinned(t *tools.Tool, _ Principal) bool {
	return a.checker.Pinned(t.Name, ToolMeta(t))
}

// Pinned reports whether the authorizer in force pins t for p (see Pinner).
// The discovery tools are always pinned; other tools only by an Authorizer
// that implements Pinner.
func (b *Broker) Pinned(t *tools.Tool, p Principal) bool {
	if IsDiscovery(t.Name) {
		return true
	}
	pn, ok := b.authorizer().(Pinner)
	return ok && pn.Pinned(t, p)
}
