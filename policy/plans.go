package policy

import (
	"fmt"
	"path"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// Plan rules refuse a program before it runs, from its plan: the tools
// its text names (docs/programs.md). They are the policy file's plans
// section:
//
//	plans:
//	  - name: read-then-send         # optional; else "plans[i]"
//	    names: [list_messages, "send_*"]  # the plan names a tool matching
//	                                 # each entry (exact names and globs)
//	    refuse_when: 'plan.dynamic > 0'   # expr-lang, a bool
//	    message: a program may not both read the inbox and send mail
//	    hint: split the work into two programs
//
// A plan rule refuses the program when every condition it sets holds (it
// sets names, refuse_when or both); the first such rule names the refusal.
// A refused program makes no call.

// PlanRequest is a program about to run, as plan rules see it.
type PlanRequest struct {
	// Caller is who submits the program: Code for run_code and a program
	// calling a saved program, Direct for a saved program called directly.
	Caller    string
	Principal Principal
	// Program names the saved program (its tool's name); empty for run_code.
	Program  string
	Language string
	// Tools are the tools the program names: those of its plan and, for
	// each saved program among them, the tools that program names.
	Tools []string
	// Dynamic counts the names the plan could not read.
	Dynamic int
	// Imports are a WebAssembly module's imports, "module.name".
	Imports []string
}

// planEnv is what a refuse_when expression sees.
type planEnv struct {
	Plan      envPlan      `expr:"plan"`
	Principal envPrincipal `expr:"principal"`
	Caller    string       `expr:"caller"`
}

type envPlan struct {
	Tools    []string `expr:"tools"`
	Dynamic  int      `expr:"dynamic"`
	Imports  []string `expr:"imports"`
	Language string   `expr:"language"`
	Program  string   `expr:"program"`
}

type rawPlan struct {
	Name       string            `yaml:"name"`
	Names      []located[string] `yaml:"names"`
	RefuseWhen *located[string]  `yaml:"refuse_when"`
	Message    string            `yaml:"message"`
	Hint       string            `yaml:"hint"`
}

// planRule is one compiled plan rule.
type planRule struct {
	id      string
	names   []glob // each must match a tool of the plan
	nameSrc []string
	when    *vm.Program
	whenSrc string
	message string
	hint    string
}

// maxPlanRules caps the plans section.
const maxPlanRules = 1000

func compilePlans(ps *problems, raw []located[rawPlan], ruleNames map[string]int, src []byte) []*planRule {
	if len(raw) > maxPlanRules {
		ps.add(0, 0, "plans: %d rules, over the limit of %d", len(raw), maxPlanRules)
		return nil
	}
	var out []*planRule
	seen := map[string]bool{}
	for i := range raw {
		lr := &raw[i]
		rp := &lr.v
		r := &planRule{id: fmt.Sprintf("plans[%d]", i), message: rp.Message, hint: rp.Hint}
		if rp.Name != "" {
			switch {
			case !namePattern().MatchString(rp.Name):
				ps.at(lr.p, "%s: name %q: want a letter then letters, digits, _ . : or -, at most 64", r.id, capString(rp.Name, 80))
			case reserved[rp.Name] || ruleNames[rp.Name] > 0 || seen[rp.Name]:
				ps.at(lr.p, "%s: name %q is already used by a rule or is reserved", r.id, rp.Name)
			default:
				seen[rp.Name] = true
				r.id = rp.Name
			}
		}
		if len(r.message) > maxTextBytes || len(r.hint) > maxTextBytes {
			ps.at(lr.p, "%s: message and hint are capped at %d bytes", r.id, maxTextBytes)
		}
		if rp.Names == nil && rp.RefuseWhen == nil {
			ps.at(lr.p, "%s: set names, refuse_when or both: a plan rule with neither would refuse every program", r.id)
		}
		if rp.Names != nil && len(rp.Names) == 0 {
			ps.at(lr.p, "%s: names: empty list (omit it)", r.id)
		}
		for _, n := range rp.Names {
			if n.v == "" {
				ps.at(n.p, "%s: names: empty tool name", r.id)
				continue
			}
			if _, err := path.Match(n.v, ""); err != nil {
				ps.at(n.p, "%s: names: bad glob %q: %v", r.id, n.v, err)
				continue
			}
			r.names = append(r.names, compileGlob(n.v))
			r.nameSrc = append(r.nameSrc, n.v)
		}
		if w := rp.RefuseWhen; w != nil && exprOK(ps, r.id, "refuse_when", w) {
			r.whenSrc = w.v
			prog, err := compilePlanWhen(w.v)
			if err != nil {
				p, msg := exprPos(w, src, err)
				ps.at(p, "%s: refuse_when: %s", r.id, msg)
			} else {
				r.when = prog
			}
		}
		out = append(out, r)
	}
	return out
}

// exprOK reports whether the expression w of key (when, refuse_when, …)
// may be compiled: not empty, not over MaxWhenBytes.
func exprOK(ps *problems, id, key string, w *located[string]) bool {
	switch {
	case strings.TrimSpace(w.v) == "":
		ps.at(w.p, "%s: %s: empty expression (omit %s for no condition)", id, key, key)
	case len(w.v) > MaxWhenBytes:
		ps.at(w.p, "%s: %s: expression longer than %d bytes", id, key, MaxWhenBytes)
	default:
		return true
	}
	return false
}

// compilePlanWhen compiles a refuse_when expression with the restrictions
// of a rule's when (compileOptions), over planEnv.
func compilePlanWhen(src string) (*vm.Program, error) {
	opts := []expr.Option{expr.Env(planEnv{}), expr.AsBool(), expr.WarnOnAny(), expr.MaxNodes(maxNodes)}
	for _, b := range disabledBuiltins {
		opts = append(opts, expr.DisableBuiltin(b))
	}
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, err
	}
	root := prog.Node()
	var v walker
	v.keys = map[string]bool{}
	ast.Walk(&root, &v)
	if v.nested {
		return nil, fmt.Errorf("a predicate (all, any, filter, map, …) inside another is not allowed: its cost grows with the square of the plan")
	}
	return prog, nil
}

// HasPlanRules reports whether the policy has a plans section: only then
// can a plan refuse a program.
func (c *Checker) HasPlanRules() bool { return len(c.plans) > 0 }

// DecidePlan decides whether the program of req may run. It never panics
// and refuses on an evaluation error, naming the rule. A program no plan
// rule refuses is allowed (rule "default").
func (c *Checker) DecidePlan(req *PlanRequest) (d Decision) {
	defer func() {
		if p := recover(); p != nil {
			d = Decision{Rule: "policy.error", Reason: fmt.Sprintf("plan evaluation failed: %v", p),
				Message: "the policy could not evaluate the program's plan, so the program is refused"}
		}
	}()
	if req == nil {
		return Decision{Rule: "policy.error", Reason: "no request", Message: "the policy could not evaluate the program's plan, so the program is refused"}
	}
	for _, r := range c.plans {
		matched, why, err := r.matches(req)
		if err != "" {
			return Decision{Rule: r.id, Reason: "refuse_when: " + err,
				Message: "the policy could not evaluate its plan rule " + r.id + ", so the program is refused",
				Hint:    r.hint}
		}
		if matched {
			return Decision{Rule: r.id, Reason: "plan refused: " + why,
				Message: orDefault(r.message, "the policy refuses a program whose plan "+why),
				Hint:    orDefault(r.hint, "Split the work into programs the policy allows, or ask the user to make the calls.")}
		}
	}
	return Decision{Allow: true, Rule: "default", Reason: "no plan rule refused the program"}
}

// matches reports whether r refuses req, and why in words; err is an
// evaluation error.
func (r *planRule) matches(req *PlanRequest) (bool, string, string) {
	var why []string
	for i, g := range r.names {
		hit := ""
		for _, t := range req.Tools {
			if g.match(t) {
				hit = t
				break
			}
		}
		if hit == "" {
			return false, "", ""
		}
		if hit == r.nameSrc[i] {
			why = append(why, hit)
		} else {
			why = append(why, hit+" ("+r.nameSrc[i]+")")
		}
	}
	text := ""
	if len(why) > 0 {
		text = "names " + strings.Join(why, " and ")
	}
	if r.when != nil {
		e := planEnv{Caller: req.Caller, Principal: envPrincipal{ID: req.Principal.ID, Roles: req.Principal.Roles},
			Plan: envPlan{Tools: req.Tools, Dynamic: req.Dynamic, Imports: req.Imports, Language: req.Language, Program: req.Program}}
		if e.Principal.Roles == nil {
			e.Principal.Roles = []string{}
		}
		if e.Plan.Tools == nil {
			e.Plan.Tools = []string{}
		}
		if e.Plan.Imports == nil {
			e.Plan.Imports = []string{}
		}
		m := vms.Get().(*vm.VM)
		out, err := m.Run(r.when, &e)
		vms.Put(m)
		if err != nil {
			return false, "", "evaluation failed: " + capString(oneLine(err.Error()), 300)
		}
		if b, _ := out.(bool); !b {
			return false, "", ""
		}
		if text != "" {
			text += " and "
		}
		text += "matches " + capString(r.whenSrc, 200)
	}
	return true, text, ""
}
