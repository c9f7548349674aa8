package js

import (
	"reflect"
	"sort"
	"strconv"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"

	"github.com/sandcall/sandcall/sandbox"
)

// MaxPlanTools caps the distinct names a plan lists; a name past it is
// counted as dynamic.
const MaxPlanTools = 1000

// The discovery wrappers of the tools object, and the tools they call.
var planSpecial = map[string]string{"$search": searchToolsName, "$describe": describeToolsName}

// Plan reads what the JavaScript program src (the body of an async
// function, as run_code takes it) will call, from its syntax tree, without
// running it: every tools.x, tools["x"] and tools.call("x", …) names x,
// wherever it is (a name on a branch never taken is listed); a computed
// name (tools[k], tools.call(k, …)) and the tools object used as a value
// (aliased, passed, enumerated, reached through globalThis) count as
// Dynamic. A program that shadows `tools` with a variable of its own is
// read as if it did not: its plan lists more than it can call, never
// less. tools.$search and tools.$describe name search_tools and
// describe_tools; tools.$read names none.
//
// Lines are those of src. src must parse as a program (else E_SYNTAX at
// its line, as the engine reports it); its size is not checked here, its
// nesting is (E_SOURCE_LIMIT past MaxNesting).
func Plan(src string) (sandbox.Plan, *sandbox.Error) {
	p, _, err := PlanColumns(src)
	return p, err
}

// PlanColumns is Plan with, for each of the plan's tools, the 1-based byte
// column of src where the program first names it (on the tool's Line): a
// transpiler maps the position back to its own source with them.
func PlanColumns(src string) (sandbox.Plan, []int, *sandbox.Error) {
	if line, ok := sandbox.NestingOK(src, MaxNesting); !ok {
		return sandbox.Plan{}, nil, sandbox.Errorf(sandbox.ESourceLimit,
			"Flatten the program: nest brackets and operators less deeply.",
			"line "+strconv.Itoa(line)+": the program nests deeper than "+strconv.Itoa(MaxNesting)+" levels")
	}
	prg, err := parseProgram(src)
	if err != nil {
		return sandbox.Plan{}, nil, err
	}
	return planOf(prg, src)
}

// planOf reads the plan of src from prg, its parsed wrapped form, with the
// column of each tool (see PlanColumns).
func planOf(prg *ast.Program, src string) (pl sandbox.Plan, cols []int, perr *sandbox.Error) {
	defer func() {
		if r := recover(); r != nil { // a tree shape the walker did not expect
			pl, cols = sandbox.Plan{}, nil
			perr = sandbox.Errorf(sandbox.EInternal, "", "the program's plan could not be read")
		}
	}()
	p := planner{f: prg.File, first: map[string]file.Idx{}}
	p.node(prg)
	out := sandbox.Plan{Tools: make([]sandbox.PlanTool, 0, len(p.first)), Dynamic: p.dynamic}
	for name, idx := range p.first {
		out.Tools = append(out.Tools, sandbox.PlanTool{Name: name, Line: p.f.Position(int(idx)).Line})
	}
	sort.Slice(out.Tools, func(i, j int) bool {
		a, b := out.Tools[i], out.Tools[j]
		if ia, ib := p.first[a.Name], p.first[b.Name]; ia != ib {
			return ia < ib
		}
		return a.Name < b.Name
	})
	cols = make([]int, len(out.Tools))
	for i, t := range out.Tools {
		pos := p.f.Position(int(p.first[t.Name]))
		_, cols[i] = userPos(src, pos.Line, pos.Column)
	}
	return out, cols, nil
}

// planner walks a syntax tree for Plan.
type planner struct {
	f       *file.File
	first   map[string]file.Idx // name → where it is first named
	dynamic int
}

// name records a tool named at idx.
func (p *planner) name(n string, idx file.Idx) {
	if tool, ok := planSpecial[n]; ok {
		n = tool
	} else if n == sandbox.ReadHandle || n == "" || n[0] == '$' || notTools[n] {
		return // tools.$read, and what tools answers as an object, call no tool
	}
	if len(n) > 256 {
		p.dynamic++ // the engine refuses such a name at the call
		return
	}
	if old, ok := p.first[n]; ok {
		if idx < old {
			p.first[n] = idx
		}
		return
	}
	if len(p.first) >= MaxPlanTools {
		p.dynamic++
		return
	}
	p.first[n] = idx
}

// ident reports whether e is the identifier name (through ?. wrappers).
func ident(e ast.Expression, name string) bool {
	for {
		switch x := e.(type) {
		case *ast.Optional:
			e = x.Expression
		case *ast.OptionalChain:
			e = x.Expression
		case *ast.Identifier:
			return string(x.Name) == name
		default:
			return false
		}
	}
}

// global reports whether e is globalThis or this (which is globalThis in
// the program's function).
func global(e ast.Expression) bool {
	_, this := e.(*ast.ThisExpression)
	return this || ident(e, "globalThis")
}

// literal returns the value of a string literal, or of a template literal
// without substitutions.
func literal(e ast.Expression) (string, bool) {
	switch x := e.(type) {
	case *ast.StringLiteral:
		return string(x.Value), true
	case *ast.TemplateLiteral:
		if x.Tag == nil && len(x.Expressions) == 0 && len(x.Elements) == 1 && x.Elements[0].Valid {
			return string(x.Elements[0].Parsed), true
		}
	}
	return "", false
}

// member returns the name a member access of tools reads (tools.x,
// tools["x"]), whether it is a member access of tools at all, and whether
// the name could be read.
func member(e ast.Expression) (name string, idx file.Idx, isTools, known bool) {
	for {
		switch x := e.(type) {
		case *ast.Optional:
			e = x.Expression
			continue
		case *ast.OptionalChain:
			e = x.Expression
			continue
		case *ast.DotExpression:
			if ident(x.Left, "tools") {
				return string(x.Identifier.Name), x.Identifier.Idx, true, true
			}
		case *ast.BracketExpression:
			if ident(x.Left, "tools") {
				s, ok := literal(x.Member)
				return s, x.Member.Idx0(), true, ok
			}
		}
		return "", 0, false, false
	}
}

// node walks n.
func (p *planner) node(n ast.Node) {
	switch x := n.(type) {
	case nil:
		return
	case *ast.CallExpression:
		if name, _, isTools, known := member(x.Callee); isTools && known && name == "call" {
			// tools.call("x", args): the name is the first argument.
			if len(x.ArgumentList) > 0 {
				if s, ok := literal(x.ArgumentList[0]); ok {
					p.name(s, x.ArgumentList[0].Idx0())
				} else {
					p.dynamic++
					p.node(x.ArgumentList[0])
				}
				p.list(x.ArgumentList[1:])
			}
			return
		}
		p.node(x.Callee)
		p.list(x.ArgumentList)
		return
	case *ast.DotExpression, *ast.BracketExpression:
		name, idx, isTools, known := member(x.(ast.Expression))
		if isTools {
			switch {
			case !known:
				p.dynamic++ // tools[k]
				p.node(x.(*ast.BracketExpression).Member)
			case name == "call":
				p.dynamic++ // tools.call as a value: any name may reach it
			default:
				p.name(name, idx)
			}
			return
		}
		if d, ok := x.(*ast.DotExpression); ok {
			if global(d.Left) {
				if d.Identifier.Name == "tools" {
					p.dynamic++
				}
				return
			}
			p.node(d.Left)
			return
		}
		b := x.(*ast.BracketExpression)
		if global(b.Left) {
			if s, ok := literal(b.Member); !ok || s == "tools" {
				p.dynamic++
			}
			p.node(b.Member)
			return
		}
	case *ast.Identifier:
		if x.Name == "tools" || x.Name == "globalThis" {
			p.dynamic++ // the object itself escapes: any name may be called through it
		}
		return
	case *ast.PropertyShort:
		if x.Name.Name == "tools" || x.Name.Name == "globalThis" {
			p.dynamic++ // {tools}
		}
		p.node(x.Initializer)
		return
	case *ast.PropertyKeyed:
		p.keyed(x.Computed, x.Key, x.Value)
		return
	case *ast.FieldDefinition:
		p.keyed(x.Computed, x.Key, x.Initializer)
		return
	case *ast.MethodDefinition:
		p.keyed(x.Computed, x.Key, x.Body)
		return
	case *ast.Binding:
		if x == nil {
			return
		}
		if _, ok := x.Target.(*ast.Identifier); !ok {
			p.node(x.Target) // a pattern: its defaults are expressions
		}
		p.node(x.Initializer)
		return
	case *ast.CatchStatement:
		if x == nil {
			return
		}
		if _, ok := x.Parameter.(*ast.Identifier); !ok {
			p.node(x.Parameter)
		}
		p.node(x.Body)
		return
	case *ast.FunctionLiteral:
		if x == nil {
			return
		}
		p.node(x.ParameterList)
		p.node(x.Body)
		return
	case *ast.ArrowFunctionLiteral:
		if x == nil {
			return
		}
		p.node(x.ParameterList)
		p.node(x.Body)
		return
	case *ast.ClassLiteral:
		if x == nil {
			return
		}
		p.node(x.SuperClass)
		for _, e := range x.Body {
			p.node(e)
		}
		return
	case *ast.ClassStaticBlock:
		if x == nil {
			return
		}
		p.node(x.Block)
		return
	case *ast.LabelledStatement:
		p.node(x.Statement)
		return
	case *ast.BranchStatement, *ast.MetaProperty, *ast.StringLiteral, *ast.NumberLiteral,
		*ast.BooleanLiteral, *ast.NullLiteral, *ast.RegExpLiteral, *ast.ThisExpression, *ast.EmptyStatement:
		return
	// The common nodes, without reflection (the rest: fields).
	case *ast.ExpressionStatement:
		p.node(x.Expression)
	case *ast.AwaitExpression:
		p.node(x.Argument)
	case *ast.ReturnStatement:
		p.node(x.Argument)
	case *ast.ExpressionBody:
		p.node(x.Expression)
	case *ast.BlockStatement:
		if x == nil {
			return
		}
		each(p, x.List)
	case *ast.LexicalDeclaration:
		each(p, x.List)
	case *ast.VariableStatement:
		each(p, x.List)
	case *ast.ObjectLiteral:
		each(p, x.Value)
	case *ast.ArrayLiteral:
		each(p, x.Value)
	case *ast.BinaryExpression:
		p.node(x.Left)
		p.node(x.Right)
	case *ast.AssignExpression:
		p.node(x.Left)
		p.node(x.Right)
	case *ast.IfStatement:
		p.node(x.Test)
		p.node(x.Consequent)
		p.node(x.Alternate)
	case *ast.ParameterList:
		if x == nil {
			return
		}
		each(p, x.List)
		p.node(x.Rest)
	default:
		p.fields(reflect.ValueOf(n))
	}
}

// keyed walks a property or class member: its key only when computed (a
// plain key is a name, not an expression).
func (p *planner) keyed(computed bool, key ast.Expression, value ast.Node) {
	if computed {
		p.node(key)
	}
	if value != nil && !reflect.ValueOf(value).IsNil() {
		p.node(value)
	}
}

func (p *planner) list(es []ast.Expression) { each(p, es) }

// each walks the nodes of a list.
func each[N ast.Node](p *planner, ns []N) {
	for _, n := range ns {
		p.node(n)
	}
}

var nodeType = reflect.TypeOf((*ast.Node)(nil)).Elem()

// fields walks the nodes held by n's fields (interfaces, pointers and
// slices of them); the cases node handles itself skip the fields that
// hold names rather than expressions.
func (p *planner) fields(v reflect.Value) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	for i := 0; i < v.NumField(); i++ {
		p.value(v.Field(i))
	}
}

func (p *planner) value(f reflect.Value) {
	switch f.Kind() {
	case reflect.Interface, reflect.Pointer:
		if f.IsNil() {
			return
		}
		if n, ok := f.Interface().(ast.Node); ok {
			p.node(n)
		}
	case reflect.Slice:
		if !f.Type().Elem().Implements(nodeType) && f.Type().Elem().Kind() != reflect.Interface {
			return
		}
		for j := 0; j < f.Len(); j++ {
			p.value(f.Index(j))
		}
	}
}
