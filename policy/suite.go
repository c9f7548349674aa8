package policy

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// Suite is a policy test file, as `sandcall policy test` runs it: a policy
// and the calls it must allow or deny.
//
//	policy: expense.yaml            # relative to the test file
//	cases:
//	  - name: programs may read expenses
//	    tool: get_expenses
//	    caller: code                # direct or code
//	    args: {member_id: ENG-001, quarter: Q3}
//	    principal: alice            # default "local"
//	    roles: [finance]
//	    read_only: true             # tool metadata: read_only, destructive,
//	    source: builtin             # idempotent, open_world, source,
//	                                # tool_allowed_callers
//	    run: {calls: 3, calls_by_tool: {get_expenses: 2}, elapsed_ms: 40,
//	          label: {integrity: untrusted, readers: [a@x.example],
//	                  sources: [list_messages]}}  # what the run has read
//	    label: {integrity: untrusted}   # optional: the arguments' own label
//	                                    # (opaque handles), joined with run.label
//	    arg_labels: {body: {integrity: untrusted}}  # optional: per argument
//	    at: 30s                     # clock offset from the suite's start
//	    expect: allow               # allow or deny
//	    rule: expense-reads         # optional: the deciding rule
//	    require_approval: false     # optional
//	  - name: a program may not read the inbox and send mail
//	    plan: {tools: [list_messages, send_email], dynamic: 0}  # instead of
//	                                # tool: a program's plan, for the plans
//	                                # section (also imports, language, program)
//	    expect: deny                # deny: the plan is refused
//	    rule: read-then-send
//
// Cases run in order against one Checker, so the token buckets of rate
// limits carry from one case to the next; the clock is fixed (plus `at`),
// so results never depend on timing.
type Suite struct {
	// File is the test file; Policy the policy file it names.
	File, Policy string
	Checker      *Checker
	Cases        []Case
}

// Case is one call and its expected decision.
type Case struct {
	Name    string
	Line    int // of the case in the test file
	Request Request
	// Expect is "allow" or "deny".
	Expect string
	// Rule, if set, must name the deciding rule.
	Rule string
	// RequireApproval, if set, must match the decision's.
	RequireApproval *bool
	// Plan, if set, makes the case a program's plan (Request is then
	// unused), decided by Checker.DecidePlan.
	Plan *PlanRequest
}

// Result is the outcome of one Case.
type Result struct {
	Case *Case
	Got  Decision
	Pass bool
	// Why says what did not match; empty when Pass.
	Why string
}

type rawSuite struct {
	Policy *located[string]   `yaml:"policy"`
	Cases  []located[rawCase] `yaml:"cases"`
}

type rawCase struct {
	Name               string                   `yaml:"name"`
	Tool               string                   `yaml:"tool"`
	Caller             string                   `yaml:"caller"`
	Args               any                      `yaml:"args"`
	Principal          string                   `yaml:"principal"`
	Roles              []string                 `yaml:"roles"`
	ReadOnly           bool                     `yaml:"read_only"`
	Destructive        bool                     `yaml:"destructive"`
	Idempotent         bool                     `yaml:"idempotent"`
	OpenWorld          bool                     `yaml:"open_world"`
	Source             string                   `yaml:"source"`
	ToolAllowedCallers []string                 `yaml:"tool_allowed_callers"`
	Run                *rawRun                  `yaml:"run"`
	At                 time.Duration            `yaml:"at"`
	Expect             string                   `yaml:"expect"`
	Rule               string                   `yaml:"rule"`
	RequireApproval    *bool                    `yaml:"require_approval"`
	Label              *rawCaseLabel            `yaml:"label"`
	ArgLabels          map[string]*rawCaseLabel `yaml:"arg_labels"`
	Plan               *rawCasePlan             `yaml:"plan"`
}

// rawCasePlan is a program's plan in a test case.
type rawCasePlan struct {
	Tools    []string `yaml:"tools"`
	Dynamic  int      `yaml:"dynamic"`
	Imports  []string `yaml:"imports"`
	Language string   `yaml:"language"`
	Program  string   `yaml:"program"`
}

// rawCaseLabel is a label in a test case. readers: omitted or "public" is
// public; a list names the readers. sources name the tools the flow
// reports.
type rawCaseLabel struct {
	Integrity string   `yaml:"integrity"`
	Readers   any      `yaml:"readers"`
	Sources   []string `yaml:"sources"`
}

func (l *rawCaseLabel) compile() (Label, []Source, error) {
	var out Label
	switch l.Integrity {
	case "", "trusted":
	case "untrusted":
		out.Untrusted = true
	default:
		return out, nil, fmt.Errorf("label.integrity: want trusted or untrusted, got %q", l.Integrity)
	}
	switch v := l.Readers.(type) {
	case nil:
	case string:
		if v != "public" {
			return out, nil, fmt.Errorf("label.readers: want public or a list, got %q", v)
		}
	case []any:
		names := make([]string, 0, len(v))
		for _, x := range v {
			s, ok := x.(string)
			if !ok || s == "" {
				return out, nil, fmt.Errorf("label.readers: want non-empty strings")
			}
			names = append(names, s)
		}
		out.Readers = NewReaders(names...)
	default:
		return out, nil, fmt.Errorf("label.readers: want public or a list")
	}
	var srcs []Source
	for i, t := range l.Sources {
		srcs = append(srcs, Source{Tool: t, Seq: i + 1, Label: out})
	}
	return out, srcs, nil
}

type rawRun struct {
	ID          string         `yaml:"id"`
	Calls       int            `yaml:"calls"`
	CallsByTool map[string]int `yaml:"calls_by_tool"`
	ElapsedMS   float64        `yaml:"elapsed_ms"`
	Label       *rawCaseLabel  `yaml:"label"`
}

// suiteEpoch is the fixed clock of test suites.
var suiteEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// LoadSuite reads a test file and compiles the policy it names. Problems in
// either file are an *Error with positions.
func LoadSuite(path string) (*Suite, error) {
	ps := &problems{file: path}
	src, err := readFile(path)
	if err != nil {
		return nil, err
	}
	if len(src) > MaxFileBytes {
		ps.add(0, 0, "the file is larger than %d bytes", MaxFileBytes)
		return nil, ps.err()
	}
	var raw rawSuite
	if err := yaml.UnmarshalWithOptions(src, &raw, yaml.DisallowUnknownField()); err != nil {
		yamlProblem(ps, err)
		return nil, ps.err()
	}
	s := &Suite{File: path}
	if raw.Policy == nil || raw.Policy.v == "" {
		ps.add(1, 1, "policy: required (the policy file to test, relative to this file)")
		return nil, ps.err()
	}
	s.Policy = raw.Policy.v
	if !filepath.IsAbs(s.Policy) {
		s.Policy = filepath.Join(filepath.Dir(path), s.Policy)
	}
	if len(raw.Cases) == 0 {
		ps.add(1, 1, "cases: want at least one case")
	}
	for i := range raw.Cases {
		rc := &raw.Cases[i].v
		c := Case{Name: rc.Name, Line: raw.Cases[i].p.line, Expect: rc.Expect, Rule: rc.Rule, RequireApproval: rc.RequireApproval}
		if c.Name == "" {
			c.Name = fmt.Sprintf("cases[%d]", i)
		}
		where := raw.Cases[i].p
		if rc.Plan != nil {
			if rc.Tool != "" {
				ps.at(where, "%s: a case has tool or plan, not both", c.Name)
			}
			if rc.Caller == "" {
				rc.Caller = Code
			}
			principal := rc.Principal
			if principal == "" {
				principal = "local"
			}
			c.Plan = &PlanRequest{Caller: rc.Caller, Principal: Principal{ID: principal, Roles: rc.Roles},
				Tools: rc.Plan.Tools, Dynamic: rc.Plan.Dynamic, Imports: rc.Plan.Imports,
				Language: rc.Plan.Language, Program: rc.Plan.Program}
		} else if rc.Tool == "" {
			ps.at(where, "%s: tool or plan: required", c.Name)
		}
		if callerBit(rc.Caller) == 0 {
			ps.at(where, "%s: caller: want direct or code, got %q", c.Name, rc.Caller)
		}
		if rc.Expect != "allow" && rc.Expect != "deny" {
			ps.at(where, "%s: expect: want allow or deny, got %q", c.Name, rc.Expect)
		}
		for _, a := range rc.ToolAllowedCallers {
			if callerBit(a) == 0 {
				ps.at(where, "%s: tool_allowed_callers: unknown caller %q", c.Name, a)
			}
		}
		req := Request{Caller: rc.Caller, Tool: rc.Tool,
			Meta: ToolMeta{ReadOnly: rc.ReadOnly, Destructive: rc.Destructive, Idempotent: rc.Idempotent,
				OpenWorld: rc.OpenWorld, Source: rc.Source, AllowedCallers: rc.ToolAllowedCallers},
			Principal: Principal{ID: rc.Principal, Roles: rc.Roles},
			Time:      suiteEpoch.Add(rc.At)}
		if req.Principal.ID == "" {
			req.Principal.ID = "local"
		}
		if rc.Args != nil {
			b, err := json.Marshal(rc.Args)
			if err != nil {
				ps.at(where, "%s: args: %v", c.Name, err)
			}
			req.Args = b
		}
		if r := rc.Run; r != nil {
			req.Run = Run{ID: r.ID, Calls: r.Calls, CallsByTool: r.CallsByTool,
				Elapsed: time.Duration(r.ElapsedMS * float64(time.Millisecond))}
			if r.Label != nil {
				l, srcs, err := r.Label.compile()
				if err != nil {
					ps.at(where, "%s: run.%v", c.Name, err)
				}
				req.Run.Label, req.Run.Flow = l, srcs
			}
		}
		if rc.Label != nil {
			l, srcs, err := rc.Label.compile()
			if err != nil {
				ps.at(where, "%s: %v", c.Name, err)
			}
			req.Label, req.LabelSources = l, srcs
		}
		for k, rl := range rc.ArgLabels {
			if rl == nil {
				continue
			}
			l, srcs, err := rl.compile()
			if err != nil {
				ps.at(where, "%s: arg_labels.%s: %v", c.Name, k, err)
			}
			if req.ArgLabels == nil {
				req.ArgLabels = map[string]Label{}
			}
			req.ArgLabels[k] = l
			req.Label = req.Label.Join(l)
			req.LabelSources = append(req.LabelSources, srcs...)
		}
		c.Request = req
		s.Cases = append(s.Cases, c)
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	ch, err := Load(s.Policy)
	if err != nil {
		return nil, err
	}
	s.Checker = ch
	return s, nil
}

// Run decides every case, in order.
func (s *Suite) Run() []Result {
	out := make([]Result, len(s.Cases))
	for i := range s.Cases {
		c := &s.Cases[i]
		var d Decision
		if c.Plan != nil {
			d = s.Checker.DecidePlan(c.Plan)
		} else {
			d = s.Checker.Decide(&c.Request)
		}
		r := Result{Case: c, Got: d, Pass: true}
		var why []string
		if got := verdict(d); got != c.Expect {
			why = append(why, fmt.Sprintf("got %s, want %s", got, c.Expect))
		}
		if c.Rule != "" && d.Rule != c.Rule {
			why = append(why, fmt.Sprintf("decided by %s, want %s", d.Rule, c.Rule))
		}
		if c.RequireApproval != nil && d.RequireApproval != *c.RequireApproval {
			why = append(why, fmt.Sprintf("require_approval %t, want %t", d.RequireApproval, *c.RequireApproval))
		}
		if len(why) > 0 {
			r.Pass = false
			r.Why = strings.Join(why, "; ")
		}
		out[i] = r
	}
	return out
}

func verdict(d Decision) string {
	if d.Allow {
		return "allow"
	}
	return "deny"
}

// Report writes one PASS or FAIL line per result and a summary, like `opa
// test`, and reports whether every case passed.
func Report(w io.Writer, s *Suite, results []Result) bool {
	failed := 0
	for _, r := range results {
		if r.Pass {
			fmt.Fprintf(w, "PASS  %s: %s (%s by %s)\n", s.File, r.Case.Name, verdict(r.Got), r.Got.Rule)
			continue
		}
		failed++
		fmt.Fprintf(w, "FAIL  %s:%d: %s: %s\n      reason: %s\n", s.File, r.Case.Line, r.Case.Name, r.Why, r.Got.Reason)
	}
	fmt.Fprintf(w, "%s: %d/%d passed\n", s.File, len(results)-failed, len(results))
	return failed == 0
}
