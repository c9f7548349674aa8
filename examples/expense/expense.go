// Package expense is the expense-check demo toolset of the standard workload
// (docs/workloads.md, "Standard workloads"): three read-only tools over synthetic,
// deterministic data, and the program that uses them.
//
// The tools produce compact JSON byte-identical to the reference generator
// (reference-data.mjs), so a run can be checked byte for byte against other
// sandboxes: see the *SHA256 constants. Program is the workload's program;
// ReferenceSummary its answer computed directly in Go.
//
// # Limits
//
// department and member_id are free strings from a model, so they are capped
// (1 to 64 printable ASCII characters, which also keeps the data ASCII as the
// reference requires), and results are cached in a bounded LRU (MaxCacheEntries,
// MaxCacheBytes): a hostile program cannot grow memory without bound.
package expense

import (
	"bytes"
	"container/list"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/sandcall/sandcall/tools"
)

// Program is the workload's JavaScript program: who in engineering went over
// their Q3 travel budget? Its result is ReferenceSummary, byte for byte.
//
//go:embed program.js
var Program string

// ProgramTS is Program in TypeScript (interfaces, a type union, a generic
// helper): run as language "typescript", its result is ReferenceSummary too.
//
//go:embed program.ts
var ProgramTS string

// Checks of the standard workload: sha256 of compact JSON.
const (
	// TeamSHA256 is the sha256 of get_team_members({department:"engineering"}).
	TeamSHA256 = "cca5adb2b4b320673112baef942136ab9fe47e8b60e48e96849eb2f51e452436"
	// ExpensesSHA256 is the sha256 of get_expenses({member_id:"ENG-001", quarter:"Q3"}).
	ExpensesSHA256 = "e0f2a9cd1f37c29b42aa5279689c42fe2fa5a4ec758319d44ab951eaf9b80cd9"
	// SummarySHA256 is the sha256 of Program's result and of ReferenceSummary.
	SummarySHA256 = "ced1ffb502f5a3b35468831e1b0cdef8f4aa4595953c23304d30e28b5555c250"
	// SummaryBytes and SummaryRows describe ReferenceSummary.
	SummaryBytes = 1791
	SummaryRows  = 16
	// DirectCalls, DirectBytes and DirectPrettyBytes are what a model
	// calling one tool per turn reads for this workload (see MeasureDirect):
	// 1 team + 5 distinct levels + 50 members' expenses.
	DirectCalls       = 56
	DirectBytes       = 313263
	DirectPrettyBytes = 374579
)

// Cache bounds: results are generated once per argument set and kept as
// encoded JSON, least recently used first out.
const (
	MaxCacheEntries = 2048
	MaxCacheBytes   = 8 << 20
)

// TeamArgs are the arguments of get_team_members.
type TeamArgs struct {
	Department string `json:"department" minLength:"1" maxLength:"64" pattern:"^[ -~]+$" jsonschema:"department name, lower case, e.g. engineering (printable ASCII, at most 64 characters)"`
}

// BudgetArgs are the arguments of get_budget_by_level.
type BudgetArgs struct {
	Level string `json:"level" enum:"L1,L2,L3,L4,L5" jsonschema:"employee level, as get_team_members reports it"`
}

// ExpensesArgs are the arguments of get_expenses.
type ExpensesArgs struct {
	MemberID string `json:"member_id" minLength:"1" maxLength:"64" pattern:"^[ -~]+$" jsonschema:"member id from get_team_members, e.g. ENG-001"`
	Quarter  string `json:"quarter" enum:"Q1,Q2,Q3,Q4" jsonschema:"quarter of 2024"`
}

var effects = tools.Effects{ReadOnly: true, Idempotent: true}

// Tools returns the three tools of the expense toolset, new on each call (so
// that each catalog owns its tools); they share one bounded result cache.
func Tools() []*tools.Tool {
	team := tools.MustFunc(tools.Tool{
		Name:  "get_team_members",
		Title: "Team members",
		Description: "Who is on a department's team, and at what level? Returns all members of the department " +
			"(50) as [{id, name, level}], in id order.\n" +
			"Use when you need member ids for get_expenses, or levels for get_budget_by_level. " +
			"Do not use for budgets or spending (use get_budget_by_level or get_expenses instead).",
		Effects:      effects,
		OutputBudget: 16 << 10, // 50 members: about 2.6 KB, at most ~8 KB with the longest department names
	}, func(ctx context.Context, in TeamArgs) (tools.Encoded[[]Member], error) {
		return cached[[]Member]("t|"+in.Department, func() any { return genTeam(in.Department) })
	})
	budget := tools.MustFunc(tools.Tool{
		Name:  "get_budget_by_level",
		Title: "Travel budget of a level",
		Description: "What is the quarterly travel budget of an employee level? Returns {level, travel_limit, currency} " +
			"for one level, L1 to L5.\n" +
			"Use when comparing a member's travel spending with their limit: call it once per distinct level, " +
			"not once per member. Do not use for actual spending (use get_expenses instead).",
		Effects:      effects,
		OutputBudget: 1 << 10, // one object of about 50 bytes
	}, func(ctx context.Context, in BudgetArgs) (tools.Encoded[Budget], error) {
		return cached[Budget]("b|"+in.Level, func() any { return genBudget(in.Level) })
	})
	expenses := tools.MustFunc(tools.Tool{
		Name:  "get_expenses",
		Title: "Expenses of a member in a quarter",
		Description: "What did one team member spend in a quarter of 2024? Returns the member's expense rows " +
			"(40) as [{date, category, amount, description}], amounts in USD; category is one of travel, meals, " +
			"software, equipment, training, office.\n" +
			"Use when totalling a member's spending, e.g. travel in Q3. Do not use to list members " +
			"(use get_team_members) or for budgets (use get_budget_by_level instead).",
		Effects:      effects,
		OutputBudget: 16 << 10, // 40 rows: at most about 6.3 KB
	}, func(ctx context.Context, in ExpensesArgs) (tools.Encoded[[]Expense], error) {
		return cached[[]Expense]("e|"+in.MemberID+"|"+in.Quarter, func() any { return genExpenses(in.MemberID, in.Quarter) })
	})
	team.Examples = []tools.Example{example(`{"department":"engineering"}`, genTeam(Department)[:2], "the first 2 of 50 members")}
	budget.Examples = []tools.Example{example(`{"level":"L3"}`, genBudget("L3"), "")}
	expenses.Examples = []tools.Example{example(`{"member_id":"ENG-001","quarter":"Q3"}`, genExpenses("ENG-001", Quarter)[:2], "the first 2 of 40 rows")}
	return []*tools.Tool{team, budget, expenses}
}

func example(args string, result any, shown string) tools.Example {
	b, err := json.Marshal(result)
	if err != nil {
		panic(err)
	}
	d := "Real call and result"
	if shown != "" {
		d += " (" + shown + " shown)"
	}
	return tools.Example{Description: d + ".", Args: json.RawMessage(args), Result: b}
}

// cached returns the encoded result for key, generating it on a miss. The
// caller gets its own copy: the cache's bytes never leave it.
func cached[T any](key string, gen func() any) (tools.Encoded[T], error) {
	if b, ok := results.get(key); ok {
		return tools.Encoded[T](bytes.Clone(b)), nil
	}
	b, err := tools.Encode(gen())
	if err != nil {
		return nil, err
	}
	results.put(key, b)
	return tools.Encoded[T](bytes.Clone(b)), nil
}

// lru is a bounded map of encoded results.
type lru struct {
	mu    sync.Mutex
	ll    *list.List // of *entry, most recent first
	m     map[string]*list.Element
	bytes int
}

type entry struct {
	key string
	val []byte
}

var results = &lru{ll: list.New(), m: make(map[string]*list.Element)}

func (c *lru) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[key]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(el)
	return el.Value.(*entry).val, true
}

func (c *lru) put(key string, val []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; ok {
		return // generated concurrently by another caller: same bytes
	}
	c.m[key] = c.ll.PushFront(&entry{key: key, val: val})
	c.bytes += len(key) + len(val)
	for c.ll.Len() > MaxCacheEntries || c.bytes > MaxCacheBytes {
		el := c.ll.Back()
		e := el.Value.(*entry)
		c.ll.Remove(el)
		delete(c.m, e.key)
		c.bytes -= len(e.key) + len(e.val)
	}
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// ReferenceSummary is the workload's answer computed directly in Go (like
// referenceSummary() in reference-data.mjs): the compact JSON of the
// over-budget rows. Program's result must be these bytes.
func ReferenceSummary() []byte {
	b, err := tools.Encode(Reference())
	if err != nil {
		panic(err) // plain structs: cannot fail
	}
	return b
}

// Direct is the context accounting of the workload done without a program:
// one tool call per model turn, every result read by the model.
type Direct struct {
	Calls       int // tool calls made
	Bytes       int // compact JSON of all results
	PrettyBytes int // the same results indented by 2 spaces (JSON.stringify(v, null, 2))
}

// MeasureDirect makes, through ts (as returned by Tools), the calls a model
// would make one per turn to answer the workload's question: the team, the
// budget of each distinct level (in order of first appearance, as Program
// does), and each member's Q3 expenses. It reports what the model would read.
func MeasureDirect(ctx context.Context, ts []*tools.Tool) (Direct, error) {
	byName := map[string]*tools.Tool{}
	for _, t := range ts {
		byName[t.Name] = t
	}
	var d Direct
	call := func(name string, args any) (json.RawMessage, error) {
		a, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		t, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("expense: no tool %q", name)
		}
		res, err := t.Call(ctx, a)
		if err != nil {
			return nil, err
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, res, "", "  "); err != nil {
			return nil, err
		}
		d.Calls++
		d.Bytes += len(res)
		d.PrettyBytes += pretty.Len()
		return res, nil
	}
	res, err := call("get_team_members", TeamArgs{Department: Department})
	if err != nil {
		return d, err
	}
	var team []Member
	if err := json.Unmarshal(res, &team); err != nil {
		return d, err
	}
	seen := map[string]bool{}
	for _, m := range team {
		if !seen[m.Level] {
			seen[m.Level] = true
			if _, err := call("get_budget_by_level", BudgetArgs{Level: m.Level}); err != nil {
				return d, err
			}
		}
	}
	for _, m := range team {
		if _, err := call("get_expenses", ExpensesArgs{MemberID: m.ID, Quarter: Quarter}); err != nil {
			return d, err
		}
	}
	return d, nil
}
