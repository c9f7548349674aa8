// Package tsdecl renders tools as TypeScript declarations, the form in which
// a model reads a tool before it writes a program that calls it:
//
//	/**
//	 * Lists a team member's expenses for a quarter.
//	 *
//	 * @example
//	 * await tools.get_expenses({"member_id":"u1","quarter":"Q1"})
//	 * // → [{"amount":12.5,"category":"travel"}]
//	 */
//	get_expenses(args: {
//	  /** The member's id, from get_team_members. */
//	  member_id: string;
//	  quarter: "Q1" | "Q2" | "Q3" | "Q4";
//	}): Promise<{amount: number; category: string}[]>;
//
// Declaration gives that multi-line form (with JSDoc from descriptions,
// defaults, formats and worked examples), Signature a one-line form for
// listings, and Type the type of one JSON Schema. Input schemas give the
// argument type, output schemas the Promise's type (unknown when a tool
// declares none). Enums become unions of literals, const a literal,
// oneOf/anyOf unions, allOf intersections, $refs to "#", "#/$defs/…" and
// "#/definitions/…" are resolved (inlined; a recursive one becomes a named
// type alias declared next to the tool), property names that are not
// identifiers are quoted.
//
// # Security
//
// Schemas of upstream tools are untrusted. Rendering is bounded whatever
// the schema: nesting past MaxDepth, more than MaxNodes subschemas, $ref
// cycles, enums past MaxEnum values and objects past MaxProperties
// properties are cut short (with a comment saying so), descriptions,
// property names and literals are capped (a cut literal keeps its closing
// quote) and cannot close a JSDoc comment ("*/" is escaped), the text one
// rendering builds is bounded (past maxWriterBytes, further subschemas are
// unknown: $refs that share definitions many times over cannot make the
// work explode), and every result is capped in bytes (MaxDeclarationBytes,
// MaxSignatureBytes).
package tsdecl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/tools"
)

// Bounds on what is rendered.
const (
	// MaxDepth is the deepest nesting of objects, arrays and compositions
	// rendered in full; deeper ones are shown as Record<string, unknown>,
	// unknown[] or unknown.
	MaxDepth = 8
	// MaxNodes caps the subschemas rendered for one type; the rest are
	// shown as unknown.
	MaxNodes = 2000
	// maxWriterBytes bounds the text one rendering builds, counting a
	// nested type again in each enclosing object (at most MaxDepth+1
	// times): far more than any declaration that fits in
	// MaxDeclarationBytes, so it only cuts renderings that would be
	// discarded anyway.
	maxWriterBytes = 64 * MaxDeclarationBytes
	// maxLiteralBytes caps a string literal's text (a property name, an
	// enum value, a const).
	maxLiteralBytes = 200
	// MaxEnum caps the members of an enum (or a union) shown.
	MaxEnum = 32
	// MaxProperties caps the properties of an object shown.
	MaxProperties = 64
	// MaxDocBytes caps one description in a JSDoc comment.
	MaxDocBytes = 1024
	// MaxToolDocBytes caps a tool's own description in its declaration.
	MaxToolDocBytes = 4096
	// MaxExamples caps the worked examples of a declaration, and
	// MaxExampleBytes each example's arguments and result.
	MaxExamples     = 3
	MaxExampleBytes = 600
	// MaxDeclarationBytes caps one tool's declaration.
	MaxDeclarationBytes = 16 << 10
	// MaxSignatureBytes caps a one-line signature.
	MaxSignatureBytes = 240
)

// level is how much detail a rendering shows.
type level struct {
	pretty   bool // multi-line with JSDoc
	depth    int  // MaxDepth or less
	enum     int  // enum and union members shown
	props    int  // properties shown per object
	docBytes int  // cap of one property description (pretty only)
}

var full = level{pretty: true, depth: MaxDepth, enum: MaxEnum, props: MaxProperties, docBytes: MaxDocBytes}

// Type returns the TypeScript type of s on one line, with s as the root of
// its $refs. A nil schema is "unknown".
func Type(s *jsonschema.Schema) string {
	w := newWriter(s, level{depth: MaxDepth, enum: MaxEnum, props: MaxProperties})
	t, _ := w.typ(s, 0, 0)
	return capBytes(t, MaxDeclarationBytes)
}

// Signature returns t's one-line declaration for listings, such as
//
//	get_expenses(args: {member_id: string; quarter: "Q1" | "Q2" | "Q3" | "Q4"}): Promise<{amount: number}[]>
//
// at most MaxSignatureBytes long: nested types are shown as {…} (and long
// enums cut) as far as needed to fit, and what still does not fit is cut
// with "…". It is a summary, not always valid TypeScript; Declaration is.
func Signature(t *tools.Tool) string {
	levels := []struct{ in, out, enum int }{
		{3, 2, 8}, {2, 1, 6}, {1, 1, 4}, {1, 0, 4}, {0, 0, 0},
	}
	var s string
	for _, l := range levels {
		s = signature(t, l.in, l.out, l.enum)
		if len(s) <= MaxSignatureBytes {
			return s
		}
	}
	return capBytes(s, MaxSignatureBytes)
}

func signature(t *tools.Tool, inDepth, outDepth, enum int) string {
	in := newWriter(t.InputSchema, level{depth: inDepth, enum: enum, props: MaxProperties})
	in.brief = true
	args := "{}"
	if t.InputSchema != nil {
		args, _ = in.typ(t.InputSchema, 0, 0)
	}
	out := newWriter(t.OutputSchema, level{depth: outDepth, enum: enum, props: MaxProperties})
	out.brief = true
	res, _ := out.typ(t.OutputSchema, 0, 0)
	return t.Name + "(" + argsParam(t.InputSchema) + ": " + args + "): Promise<" + res + ">"
}

// argsParam is "args", or "args?" when the tool needs no argument (a
// program may then call tools.name() with nothing).
func argsParam(s *jsonschema.Schema) string {
	if s == nil || len(s.Required) == 0 {
		return "args?"
	}
	return "args"
}

// Declaration returns t's declaration: a JSDoc comment (description,
// effects, worked examples) and the method signature with argument and
// result types, preceded by the type aliases of recursive $refs. It is at
// most MaxDeclarationBytes long: when the full form is larger, less detail
// is shown (shallower nesting, fewer enum members, shorter property docs).
//
// The result's type loses detail first, down to the least, and only then
// the arguments': a model needs the arguments to call the tool at all (an
// HTTP API's answer, GitHub's issue say, can fill the budget alone).
func Declaration(t *tools.Tool) string {
	levels := []level{
		full,
		{pretty: true, depth: 4, enum: 16, props: 48, docBytes: 240},
		{pretty: true, depth: 2, enum: 8, props: 32, docBytes: 80},
		{pretty: false, depth: 1, enum: 4, props: 24},
	}
	// Each side is rendered at most once per level.
	ins, outs := make([]*rendered, len(levels)), make([]*rendered, len(levels))
	var d string
	for i := range 2*len(levels) - 1 {
		a, r := max(0, i-len(levels)+1), min(i, len(levels)-1)
		if ins[a] == nil {
			ins[a] = render(t.InputSchema, levels[a], "{}")
		}
		if outs[r] == nil {
			outs[r] = render(t.OutputSchema, levels[r], "")
		}
		d = declaration(t, levels[a], ins[a], outs[r])
		if len(d) <= MaxDeclarationBytes {
			return d
		}
	}
	return capBytes(d, MaxDeclarationBytes-len("\n/* … cut */")) + "\n/* … cut */"
}

// Declarations returns the declarations of ts, separated by blank lines.
func Declarations(ts []*tools.Tool) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = Declaration(t)
	}
	return strings.Join(parts, "\n\n")
}

// rendered is a schema's type and the aliases it needs.
type rendered struct {
	typ     string
	aliases []string
}

// render renders s at level l; a nil s renders as none when none is set.
func render(s *jsonschema.Schema, l level, none string) *rendered {
	if s == nil && none != "" {
		return &rendered{typ: none}
	}
	w := newWriter(s, l)
	typ, _ := w.typ(s, 0, 0)
	return &rendered{typ: typ, aliases: w.renderAliases()}
}

func declaration(t *tools.Tool, l level, in, out *rendered) string {
	var b strings.Builder
	for _, a := range append(append([]string(nil), in.aliases...), out.aliases...) {
		b.WriteString(a)
		b.WriteString("\n")
	}
	b.WriteString(toolDoc(t, l))
	fmt.Fprintf(&b, "%s(%s: %s): Promise<%s>;", t.Name, argsParam(t.InputSchema), in.typ, out.typ)
	return b.String()
}

// toolDoc is the JSDoc comment of a tool.
func toolDoc(t *tools.Tool, l level) string {
	var lines []string
	desc := strings.TrimSpace(t.Description)
	if t.Title != "" && !strings.Contains(desc, t.Title) {
		lines = append(lines, docText(t.Title, 200))
	}
	if desc != "" {
		docCap := MaxToolDocBytes
		if !l.pretty || l.docBytes < MaxDocBytes {
			docCap = 1024
		}
		lines = append(lines, docText(desc, docCap))
	}
	if e := effects(t.Effects); e != "" {
		lines = append(lines, "", e)
	}
	if t.DirectRaw && t.OutputSchema == nil {
		lines = append(lines, "", mcpReturns)
	}
	for i, ex := range t.Examples {
		if i == MaxExamples {
			break
		}
		lines = append(lines, "", "@example"+strings.TrimRight(" "+docText(oneLine(ex.Description), 200), " "))
		lines = append(lines, docText("await tools."+t.Name+"("+compactJSON(ex.Args, "{}")+")", MaxExampleBytes))
		if len(ex.Result) > 0 {
			lines = append(lines, docText("// → "+compactJSON(ex.Result, "null"), MaxExampleBytes))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("/**\n")
	for _, ln := range strings.Split(strings.Join(lines, "\n"), "\n") {
		if ln == "" {
			b.WriteString(" *\n")
			continue
		}
		b.WriteString(" * ")
		b.WriteString(ln)
		b.WriteString("\n")
	}
	b.WriteString(" */\n")
	return b.String()
}

func effects(e tools.Effects) string {
	var parts []string
	if e.ReadOnly {
		parts = append(parts, "read-only")
	}
	if e.Destructive {
		parts = append(parts, "destructive")
	}
	if e.Idempotent {
		parts = append(parts, "idempotent")
	}
	if e.OpenWorld {
		parts = append(parts, "open world")
	}
	if len(parts) == 0 {
		return ""
	}
	return "Effects: " + strings.Join(parts, ", ") + "."
}

// compactJSON is raw compacted, or def when raw is empty or not JSON.
func compactJSON(raw json.RawMessage, def string) string {
	if len(raw) == 0 {
		return def
	}
	var c bytes.Buffer
	if json.Compact(&c, raw) != nil {
		return def
	}
	return c.String()
}

// writer renders the types of one schema document.
type writer struct {
	root  *jsonschema.Schema
	l     level
	brief bool // signatures: collapsed objects are {…}
	nodes int
	size  int // bytes of object members rendered (see maxWriterBytes)
	// expanding holds the $refs being inlined, to find cycles.
	expanding map[string]bool
	// aliases are the recursive $refs, named: ref → alias name.
	aliases    map[string]string
	aliasOrder []string
	aliasNames map[string]bool
}

func newWriter(root *jsonschema.Schema, l level) *writer {
	return &writer{root: root, l: l, expanding: map[string]bool{}, aliases: map[string]string{}, aliasNames: map[string]bool{}}
}

// kind says how a type text binds, for parentheses.
type kind int

const (
	atom kind = iota
	union
	inter
)

func (w *writer) typ(s *jsonschema.Schema, depth, indent int) (string, kind) {
	if s == nil {
		return "unknown", atom
	}
	w.nodes++
	if w.nodes > MaxNodes || w.size > maxWriterBytes {
		return "unknown", atom
	}
	if s.Ref != "" {
		return w.ref(s, depth, indent)
	}
	if tools.IsFalseSchema(s) {
		return "never", atom
	}
	if s.Const != nil {
		return literal(*s.Const), atom
	}
	if len(s.Enum) > 0 {
		return w.enum(s.Enum)
	}
	var parts []string
	var kinds []kind
	add := func(t string, k kind) {
		if t != "" && t != "unknown" {
			parts = append(parts, t)
			kinds = append(kinds, k)
		}
	}
	if t, k, ok := w.base(s, depth, indent); ok {
		add(t, k)
	}
	if len(s.OneOf) > 0 {
		add(w.union(s.OneOf, depth, indent))
	}
	if len(s.AnyOf) > 0 {
		add(w.union(s.AnyOf, depth, indent))
	}
	for _, sub := range s.AllOf {
		if depth >= w.l.depth {
			break
		}
		t, k := w.typ(sub, depth+1, indent)
		add(t, k)
	}
	switch len(parts) {
	case 0:
		return "unknown", atom
	case 1:
		return parts[0], kinds[0]
	}
	for i := range parts {
		if kinds[i] == union {
			parts[i] = "(" + parts[i] + ")"
		}
	}
	return strings.Join(parts, " & "), inter
}

// base renders the type keyword (and the object or array it implies).
func (w *writer) base(s *jsonschema.Schema, depth, indent int) (string, kind, bool) {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) == 0 {
		switch {
		case len(s.Properties) > 0 || s.AdditionalProperties != nil || len(s.PatternProperties) > 0:
			types = []string{"object"}
		case s.Items != nil || len(s.PrefixItems) > 0 || len(s.ItemsArray) > 0:
			types = []string{"array"}
		default:
			return "", atom, false
		}
	}
	var parts []string
	for _, t := range types {
		switch t {
		case "string", "boolean", "null":
			parts = append(parts, t)
		case "integer", "number":
			if !contains(parts, "number") {
				parts = append(parts, "number")
			}
		case "array":
			parts = append(parts, w.array(s, depth, indent))
		case "object":
			parts = append(parts, w.object(s, depth, indent))
		default:
			parts = append(parts, "unknown")
		}
	}
	if len(parts) == 1 {
		return parts[0], atom, true
	}
	for i, p := range parts { // null last: T[] | null reads better
		if p == "null" && i < len(parts)-1 {
			parts = append(append(parts[:i:i], parts[i+1:]...), "null")
			break
		}
	}
	return strings.Join(parts, " | "), union, true
}

func (w *writer) array(s *jsonschema.Schema, depth, indent int) string {
	if depth >= w.l.depth {
		switch {
		case w.brief && len(s.PrefixItems)+len(s.ItemsArray) > 0:
			return "[…]" // a tuple, shown in full by Declaration
		case w.brief:
			return briefItem(s.Items) + "[]"
		}
		return "unknown[]"
	}
	prefix := s.PrefixItems
	if len(prefix) == 0 {
		prefix = s.ItemsArray
	}
	if len(prefix) > 0 {
		var els []string
		for i, p := range prefix {
			if i == w.l.enum {
				break
			}
			t, _ := w.typ(p, depth+1, indent)
			els = append(els, t)
		}
		rest := s.Items
		if len(s.ItemsArray) > 0 {
			rest = s.AdditionalItems
		}
		if rest == nil || !tools.IsFalseSchema(rest) {
			t, k := w.typ(rest, depth+1, indent)
			if k != atom {
				t = "(" + t + ")"
			}
			els = append(els, "..."+t+"[]")
		}
		return "[" + strings.Join(els, ", ") + "]"
	}
	t, k := w.typ(s.Items, depth+1, indent)
	if k != atom {
		t = "(" + t + ")"
	}
	return t + "[]"
}

var identRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`) })

func propName(n string) string {
	if len(n) <= maxLiteralBytes && identRE().MatchString(n) {
		return n
	}
	return literal(n)
}

func (w *writer) object(s *jsonschema.Schema, depth, indent int) string {
	if depth >= w.l.depth {
		if w.brief {
			return "{…}"
		}
		return "Record<string, unknown>"
	}
	names := orderedProps(s)
	extra := s.AdditionalProperties
	if len(names) == 0 {
		switch {
		case extra != nil && tools.IsFalseSchema(extra):
			return "{}"
		case extra != nil:
			t, _ := w.typ(extra, depth+1, indent)
			return "Record<string, " + t + ">"
		case len(s.PatternProperties) > 0:
			keys := sortedKeys(s.PatternProperties)
			var ts []string
			for _, k := range keys {
				t, _ := w.typ(s.PatternProperties[k], depth+1, indent)
				ts = append(ts, t)
			}
			return "Record<string, " + strings.Join(ts, " | ") + ">"
		}
		return "Record<string, unknown>"
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	type prop struct{ doc, text string }
	var props []prop
	for i, n := range names {
		if i == w.l.props {
			props = append(props, prop{text: fmt.Sprintf("/* … %d more properties */", len(names)-i)})
			break
		}
		ps := s.Properties[n]
		t, _ := w.typ(ps, depth+1, indent+1)
		opt := ""
		if !required[n] {
			opt = "?"
		}
		p := prop{text: propName(n) + opt + ": " + t + ";"}
		if w.l.pretty {
			p.doc = w.propDoc(ps)
		}
		w.size += len(p.text) + len(p.doc)
		props = append(props, p)
	}
	if extra != nil && !tools.IsFalseSchema(extra) && !tools.IsTrueSchema(extra) {
		props = append(props, prop{text: "[key: string]: unknown;"})
	}
	if !w.l.pretty {
		parts := make([]string, len(props))
		for i, p := range props {
			parts[i] = strings.TrimSuffix(p.text, ";")
		}
		return "{" + strings.Join(parts, "; ") + "}"
	}
	pad := strings.Repeat("  ", indent+1)
	var b strings.Builder
	b.WriteString("{\n")
	for _, p := range props {
		if p.doc != "" {
			for _, ln := range strings.Split(p.doc, "\n") {
				b.WriteString(pad)
				b.WriteString(ln)
				b.WriteString("\n")
			}
		}
		b.WriteString(pad)
		b.WriteString(p.text)
		b.WriteString("\n")
	}
	b.WriteString(strings.Repeat("  ", indent))
	b.WriteString("}")
	return b.String()
}

// propDoc is the JSDoc comment of a property: its description, then its
// constraints, default, examples and deprecation.
func (w *writer) propDoc(s *jsonschema.Schema) string {
	if s == nil {
		return ""
	}
	var lines []string
	if d := strings.TrimSpace(s.Description); d != "" {
		lines = append(lines, docText(d, w.l.docBytes))
	} else if s.Title != "" {
		lines = append(lines, docText(s.Title, w.l.docBytes))
	}
	if c := constraints(s); c != "" {
		lines = append(lines, docText(c, 200))
	}
	if len(s.Default) > 0 {
		lines = append(lines, "@default "+docText(compactJSON(s.Default, "null"), 200))
	}
	for i, ex := range s.Examples {
		if i == 2 {
			break
		}
		b, err := json.Marshal(ex)
		if err == nil {
			lines = append(lines, "@example "+docText(string(b), 200))
		}
	}
	if s.Deprecated {
		lines = append(lines, "@deprecated")
	}
	if len(lines) == 0 {
		return ""
	}
	text := strings.Join(lines, "\n")
	if !strings.Contains(text, "\n") {
		return "/** " + text + " */"
	}
	var b strings.Builder
	b.WriteString("/**\n")
	for _, ln := range strings.Split(text, "\n") {
		b.WriteString(" * ")
		b.WriteString(ln)
		b.WriteString("\n")
	}
	b.WriteString(" */")
	return b.String()
}

// constraints summarizes the validation keywords a type cannot express.
func constraints(s *jsonschema.Schema) string {
	var parts []string
	num := func(f *float64) string { return strconv.FormatFloat(*f, 'g', -1, 64) }
	if s.Format != "" {
		parts = append(parts, "format "+s.Format)
	}
	if s.Minimum != nil {
		parts = append(parts, "minimum "+num(s.Minimum))
	}
	if s.ExclusiveMinimum != nil {
		parts = append(parts, "greater than "+num(s.ExclusiveMinimum))
	}
	if s.Maximum != nil {
		parts = append(parts, "maximum "+num(s.Maximum))
	}
	if s.ExclusiveMaximum != nil {
		parts = append(parts, "less than "+num(s.ExclusiveMaximum))
	}
	if s.Type == "integer" {
		parts = append(parts, "integer")
	}
	if s.MinLength != nil {
		parts = append(parts, fmt.Sprintf("at least %d %s", *s.MinLength, plural(*s.MinLength, "character")))
	}
	if s.MaxLength != nil {
		parts = append(parts, fmt.Sprintf("at most %d %s", *s.MaxLength, plural(*s.MaxLength, "character")))
	}
	if s.Pattern != "" {
		parts = append(parts, "pattern "+capBytes(s.Pattern, 80))
	}
	if s.MinItems != nil {
		parts = append(parts, fmt.Sprintf("at least %d %s", *s.MinItems, plural(*s.MinItems, "item")))
	}
	if s.MaxItems != nil {
		parts = append(parts, fmt.Sprintf("at most %d %s", *s.MaxItems, plural(*s.MaxItems, "item")))
	}
	if s.UniqueItems {
		parts = append(parts, "unique items")
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.ToUpper(parts[0][:1]) + strings.Join(append([]string{parts[0][1:]}, parts[1:]...), ", ") + "."
}

func (w *writer) enum(vals []any) (string, kind) {
	var parts []string
	seen := map[string]bool{}
	for _, v := range vals {
		if len(parts) == w.l.enum {
			break
		}
		t := literal(v)
		if !seen[t] {
			seen[t] = true
			parts = append(parts, t)
		}
	}
	if n := len(vals) - w.l.enum; n > 0 {
		if w.brief {
			parts = append(parts, "…")
		} else {
			parts = append(parts, fmt.Sprintf("string /* and %d more values */", n))
		}
	}
	if len(parts) == 0 {
		return "never", atom
	}
	if len(parts) == 1 {
		return parts[0], atom
	}
	return strings.Join(parts, " | "), union
}

func (w *writer) union(ss []*jsonschema.Schema, depth, indent int) (string, kind) {
	if depth >= w.l.depth {
		if w.brief {
			return "{…}", atom // shown in full by Declaration, never as unknown
		}
		return "unknown", atom
	}
	var parts []string
	seen := map[string]bool{}
	for i, s := range ss {
		if i == w.l.enum || (w.brief && i == 4) {
			parts = append(parts, "unknown /* … */")
			break
		}
		t, k := w.typ(s, depth+1, indent)
		if t == "unknown" {
			return "unknown", atom // one member takes anything: so does the union
		}
		if k == inter {
			t = "(" + t + ")"
		}
		if !seen[t] {
			seen[t] = true
			parts = append(parts, t)
		}
	}
	if len(parts) == 1 {
		return parts[0], atom
	}
	return strings.Join(parts, " | "), union
}

// ref inlines the schema a $ref names; a recursive reference becomes a
// named alias (declared by renderAliases). An unresolvable one is unknown.
func (w *writer) ref(s *jsonschema.Schema, depth, indent int) (string, kind) {
	target, name, ok := resolve(w.root, s.Ref)
	if !ok {
		return "unknown", atom
	}
	if w.expanding[s.Ref] {
		return w.alias(s.Ref, name), atom
	}
	if depth >= w.l.depth {
		if w.brief {
			return "{…}", atom // the alias is declared by Declaration only
		}
		return w.alias(s.Ref, name), atom
	}
	w.expanding[s.Ref] = true
	t, k := w.typ(target, depth, indent)
	delete(w.expanding, s.Ref)
	return t, k
}

func (w *writer) alias(ref, name string) string {
	if a, ok := w.aliases[ref]; ok {
		return a
	}
	base := aliasName(name)
	a := base
	for i := 2; w.aliasNames[a]; i++ {
		a = base + strconv.Itoa(i)
	}
	w.aliasNames[a] = true
	w.aliases[ref] = a
	w.aliasOrder = append(w.aliasOrder, ref)
	return a
}

// renderAliases declares the aliases named so far, and those their bodies
// name in turn.
func (w *writer) renderAliases() []string {
	var out []string
	for i := 0; i < len(w.aliasOrder) && i < 16; i++ {
		ref := w.aliasOrder[i]
		target, _, _ := resolve(w.root, ref)
		w.expanding[ref] = true
		t, _ := w.typ(target, 1, 0)
		delete(w.expanding, ref)
		out = append(out, "type "+w.aliases[ref]+" = "+t+";")
	}
	return out
}

// resolve finds the schema a local $ref names, and a name for it.
func resolve(root *jsonschema.Schema, ref string) (*jsonschema.Schema, string, bool) {
	if root == nil {
		return nil, "", false
	}
	if ref == "#" {
		return root, "Root", true
	}
	for _, p := range []struct {
		prefix string
		m      map[string]*jsonschema.Schema
	}{{"#/$defs/", root.Defs}, {"#/definitions/", root.Definitions}} {
		if n, ok := strings.CutPrefix(ref, p.prefix); ok {
			n = strings.ReplaceAll(strings.ReplaceAll(n, "~1", "/"), "~0", "~")
			if t, ok := p.m[n]; ok && t != nil {
				return t, n, true
			}
		}
	}
	return nil, "", false
}

// aliasName turns a $defs key into a TypeScript type name.
func aliasName(n string) string {
	var b strings.Builder
	up := true
	for _, r := range n {
		if b.Len() >= 40 {
			break
		}
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			if up && r >= 'a' && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			up = false
		default:
			up = true
		}
	}
	s := b.String()
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "T" + s
	}
	return s
}

// orderedProps lists s's properties: PropertyOrder first, then the rest
// sorted.
func orderedProps(s *jsonschema.Schema) []string {
	if len(s.Properties) == 0 {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	seen := map[string]bool{}
	for _, n := range s.PropertyOrder {
		if _, ok := s.Properties[n]; ok && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	var rest []string
	for n := range s.Properties {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

func sortedKeys(m map[string]*jsonschema.Schema) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// literal renders a JSON value as a TypeScript literal type; objects and
// arrays (which TypeScript has no literal types for) are unknown. A long
// string is cut inside its quotes.
func literal(v any) string {
	switch x := v.(type) {
	case string:
		v = capBytes(x, maxLiteralBytes)
	case float64, int, int64, bool, nil, json.Number:
	default:
		return "unknown"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return "unknown"
	}
	t := strings.TrimSuffix(b.String(), "\n")
	if _, ok := v.(string); ok {
		return t // at most 6×maxLiteralBytes, escapes included
	}
	return capBytes(t, maxLiteralBytes)
}

func plural(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// docText makes s safe inside a JSDoc comment: "*/" cannot close it,
// control characters are dropped, and it is capped at n bytes.
func docText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029:
			return -1
		}
		return r
	}, s)
	s = capBytes(s, n)
	s = strings.ReplaceAll(s, "*/", "*\\/")
	return strings.ReplaceAll(s, "\t", "  ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// capBytes caps s at n bytes on a rune boundary, marking a cut with "…".
func capBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// briefItem is the element type of a collapsed array in a signature: a
// primitive as itself, anything else {…} (never unknown, which would say
// something Declaration does not).
func briefItem(s *jsonschema.Schema) string {
	if s == nil {
		return "unknown"
	}
	if len(s.Enum) == 0 && s.Const == nil && len(s.OneOf)+len(s.AnyOf)+len(s.AllOf) == 0 && s.Ref == "" {
		switch s.Type {
		case "string", "boolean":
			return s.Type
		case "number", "integer":
			return "number"
		}
	}
	return "{…}"
}

// mcpReturns documents what a program gets from an upstream MCP tool
// without an output schema (see package upstream's Content).
const mcpReturns = `@returns the tool's text (parsed when it is JSON); when the answer also holds ` +
	`images, audio or resources, an array of its blocks in order: ` +
	`({type: "text"; text: string} | {type: "image" | "audio"; mimeType: string; data: string /* base64 */} | ` +
	`{type: "resource"; uri: string; mimeType?: string; text?: string; data?: string} | ` +
	`{type: "resource_link"; uri: string; name: string; mimeType?: string; description?: string})[]`
