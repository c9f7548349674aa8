package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// env is what a `when` expression sees. Every field is plain data: no type
// here has methods, so an expression can read but never call into the host.
type env struct {
	Caller    string         `expr:"caller"`
	Tool      string         `expr:"tool"`
	Args      map[string]any `expr:"args"`
	Principal envPrincipal   `expr:"principal"`
	Run       envRun         `expr:"run"`
	ToolMeta  envMeta        `expr:"tool_meta"`
	// Label is the label of the call's arguments (see Request.Label).
	Label envLabel `expr:"label"`
	// ArgLabels is the label of each top-level argument (see
	// Request.ArgLabels); empty unless the expression reads it.
	ArgLabels map[string]envLabel `expr:"arg_labels"`
}

type envPrincipal struct {
	ID    string   `expr:"id"`
	Roles []string `expr:"roles"`
}

type envRun struct {
	ID          string         `expr:"id"`
	Calls       int            `expr:"calls"`
	CallsByTool map[string]int `expr:"calls_by_tool"`
	ElapsedMS   float64        `expr:"elapsed_ms"`
	Label       envLabel       `expr:"label"`
}

type envMeta struct {
	ReadOnly    bool   `expr:"read_only"`
	Destructive bool   `expr:"destructive"`
	Idempotent  bool   `expr:"idempotent"`
	OpenWorld   bool   `expr:"open_world"`
	Source      string `expr:"source"`
}

// disabledBuiltins are expr builtins a policy may not use: those that read
// the clock or the time-zone database (a decision depends only on the
// request), that amplify their input (repeat), or that decode strings into
// new structures (the arguments are already plain data).
var disabledBuiltins = []string{
	"now", "date", "timezone", "duration",
	"repeat",
	"fromJSON", "toJSON", "fromBase64", "toBase64",
}

const (
	// maxNodes caps the size of one expression's syntax tree.
	maxNodes = 1000
	// memoryBudget caps what one evaluation may allocate, in expr's units
	// (elements of ranges, arrays and maps it builds).
	memoryBudget = 100_000
)

func compileOptions() []expr.Option {
	opts := []expr.Option{expr.Env(env{}), expr.AsBool(), expr.WarnOnAny(), expr.MaxNodes(maxNodes)}
	for _, b := range disabledBuiltins {
		opts = append(opts, expr.DisableBuiltin(b))
	}
	return opts
}

// compileWhen compiles and type-checks one expression. It also reports
// whether the expression refers to args, and rejects predicates nested in
// predicates (their cost grows with the square of the arguments).
//
// keys is the set of top-level argument names the expression reads when it
// reads args only as args.name or args["name"]; nil when it reads args
// otherwise (len(args), "k" in args, args[x]) and needs them all.
func compileWhen(src string) (prog *vm.Program, usesArgs bool, keys map[string]bool, err error) {
	prog, err = expr.Compile(src, compileOptions()...)
	if err != nil {
		return nil, false, nil, err
	}
	root := prog.Node()
	v := walker{keys: map[string]bool{}}
	ast.Walk(&root, &v)
	if v.nested {
		return nil, false, nil, errors.New("a predicate (all, any, filter, map, …) inside another is not allowed: its cost grows with the square of the arguments")
	}
	if v.idents != v.members {
		v.keys = nil
	}
	return prog, v.idents > 0, v.keys, nil
}

type walker struct {
	nested          bool
	idents, members int // uses of args; of them, args.<constant>
	keys            map[string]bool
}

func (w *walker) Visit(n *ast.Node) {
	switch x := (*n).(type) {
	case *ast.IdentifierNode:
		if x.Value == "args" {
			w.idents++
		}
	case *ast.MemberNode:
		id, ok1 := x.Node.(*ast.IdentifierNode)
		key, ok2 := x.Property.(*ast.StringNode)
		if ok1 && ok2 && id.Value == "args" {
			w.members++
			w.keys[key.Value] = true
		}
	case *ast.PredicateNode:
		var inner counter
		ast.Walk(&x.Node, &inner)
		if inner.n > 0 {
			w.nested = true
		}
	}
}

type counter struct{ n int }

func (c *counter) Visit(n *ast.Node) {
	if _, ok := (*n).(*ast.PredicateNode); ok {
		c.n++
	}
}

// evalError is a failed evaluation: the call is denied.
type evalError struct {
	reason, msg, hint string
}

func (e *evalError) Error() string   { return e.reason }
func (e *evalError) message() string { return e.msg }

var vms = sync.Pool{New: func() any { return &vm.VM{MemoryBudget: memoryBudget} }}

// eval evaluates r's condition for req.
func (r *rule) eval(req *Request) (bool, *evalError) {
	return r.evalProgram(r.when, r.whenArgs, req)
}

// evalProgram evaluates one of r's expressions (when, approval_when) for
// req; usesArgs says whether it reads args.
func (r *rule) evalProgram(prog *vm.Program, usesArgs bool, req *Request) (bool, *evalError) {
	e := env{
		Caller:    req.Caller,
		Tool:      req.Tool,
		Principal: envPrincipal{ID: req.Principal.ID, Roles: req.Principal.Roles},
		Run: envRun{ID: req.Run.ID, Calls: req.Run.Calls, CallsByTool: req.Run.CallsByTool,
			ElapsedMS: float64(req.Run.Elapsed.Microseconds()) / 1000},
		ToolMeta: envMeta{ReadOnly: req.Meta.ReadOnly, Destructive: req.Meta.Destructive,
			Idempotent: req.Meta.Idempotent, OpenWorld: req.Meta.OpenWorld, Source: req.Meta.Source},
	}
	if e.Principal.Roles == nil {
		e.Principal.Roles = []string{}
	}
	if e.Run.CallsByTool == nil {
		e.Run.CallsByTool = map[string]int{}
	}
	if e.ToolMeta.Source == "" {
		e.ToolMeta.Source = "builtin"
	}
	if r.usesLabels {
		e.Run.Label = newEnvLabel(req.Run.Label, req.Run.Flow)
		e.Label = newEnvLabel(req.Label.Join(req.Run.Label), flowOf(req))
	} else {
		e.Run.Label, e.Label = emptyEnvLabel, emptyEnvLabel
	}
	if usesArgs || r.usesArgLabels {
		keys := r.argKeys
		if prog != r.when || r.usesArgLabels {
			keys = nil // approval_when and arg_labels read every argument
		}
		args, err := decodeArgs(req.Args, keys)
		if err != nil {
			return false, err
		}
		e.Args = args
		if r.usesArgLabels {
			e.ArgLabels = argLabels(req, args)
		}
	}
	if e.ArgLabels == nil {
		e.ArgLabels = map[string]envLabel{}
	}
	m := vms.Get().(*vm.VM)
	out, err := m.Run(prog, &e)
	vms.Put(m)
	if err != nil {
		return false, &evalError{reason: "evaluation failed: " + capString(oneLine(err.Error()), 300)}
	}
	b, ok := out.(bool)
	if !ok {
		return false, &evalError{reason: fmt.Sprintf("evaluation returned %T, not a bool", out)}
	}
	return b, nil
}

// decodeArgs converts the arguments to plain data (map[string]any, []any,
// string, float64, bool, nil), within MaxArgsBytes and MaxArgsDepth.
// If keys is not nil, only those top-level members are kept (the rest are
// checked and skipped).
func decodeArgs(raw json.RawMessage, keys map[string]bool) (map[string]any, *evalError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return map[string]any{}, nil
	}
	if len(raw) > MaxArgsBytes {
		return nil, &evalError{
			reason: fmt.Sprintf("arguments are %d bytes, over the %d-byte limit for policy conditions", len(raw), MaxArgsBytes),
			msg:    fmt.Sprintf("the arguments are too large for the policy to check (over %d KiB), so the call is denied", MaxArgsBytes>>10),
			hint:   "Send smaller arguments: split the work into several calls."}
	}
	v, err := parseArgs(raw, MaxArgsDepth, keys)
	switch {
	case err == errDepth:
		return nil, &evalError{
			reason: fmt.Sprintf("arguments nest deeper than the limit of %d for policy conditions", MaxArgsDepth),
			msg:    fmt.Sprintf("the arguments nest too deeply for the policy to check (over %d levels), so the call is denied", MaxArgsDepth),
			hint:   "Flatten the arguments."}
	case err != nil:
		return nil, &evalError{reason: "arguments are not valid JSON"}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &evalError{reason: "arguments are not a JSON object"}
	}
	return m, nil
}

// oneLine flattens s (expr errors carry a multi-line source snippet).
func oneLine(s string) string {
	if i := bytes.IndexByte([]byte(s), '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
