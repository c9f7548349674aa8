package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// Label is the information-flow label of a value (FIDES's lattice):
// integrity, trusted or untrusted, and confidentiality, the set of readers
// allowed to see it, or public. The zero Label is the bottom of the lattice:
// trusted and public. Joining two labels gives the least label as strict
// as both: untrusted if either is, and readable only by readers of both.
type Label struct {
	// Untrusted says the value may have been written by someone the
	// operator does not trust (a web page, an inbound email, an issue
	// body): it must not steer a consequential call.
	Untrusted bool
	// Readers is who may read the value, sorted and without duplicates.
	// If nil, the value is public; an empty, non-nil list means nobody
	// (the join of two disjoint reader sets).
	Readers []string
}

// Public reports whether anyone may read a value with this label.
func (l Label) Public() bool { return l.Readers == nil }

// IsZero reports whether l is the bottom label: trusted and public.
func (l Label) IsZero() bool { return !l.Untrusted && l.Readers == nil }

// Join returns the least label at least as strict as l and o.
func (l Label) Join(o Label) Label {
	out := Label{Untrusted: l.Untrusted || o.Untrusted}
	switch {
	case l.Readers == nil:
		out.Readers = o.Readers
	case o.Readers == nil:
		out.Readers = l.Readers
	default:
		out.Readers = intersect(l.Readers, o.Readers)
	}
	return out
}

// AtLeast reports whether l is at least as strict as o: untrusted if o is,
// and no reader of l that o does not have.
func (l Label) AtLeast(o Label) bool {
	if o.Untrusted && !l.Untrusted {
		return false
	}
	if o.Readers == nil {
		return true
	}
	if l.Readers == nil {
		return false
	}
	for _, r := range l.Readers {
		if _, ok := slices.BinarySearch(o.Readers, r); !ok {
			return false
		}
	}
	return true
}

// Integrity is "trusted" or "untrusted".
func (l Label) Integrity() string {
	if l.Untrusted {
		return "untrusted"
	}
	return "trusted"
}

// String is "untrusted, readers [a b]" or "trusted, public".
func (l Label) String() string {
	if l.Readers == nil {
		return l.Integrity() + ", public"
	}
	return l.Integrity() + ", readers [" + strings.Join(l.Readers, " ") + "]"
}

// NewReaders returns a reader set: sorted, without duplicates or empty
// names, never nil (a nil Readers means public).
func NewReaders(names ...string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// intersect returns the sorted intersection of two sorted sets, never nil.
func intersect(a, b []string) []string {
	out := make([]string, 0, min(len(a), len(b)))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, a[i])
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return out
}

// Source is one tool result that raised a run's label: the flow a denial
// names.
type Source struct {
	Tool string
	// Seq is the call's number within its run (1-based).
	Seq int
	// Label is the result's label.
	Label Label
}

// MaxSources caps the sources a run keeps for its flow: the first ones that
// raised its label (a later one that raises it again is kept too, while
// there is room).
const MaxSources = 16

// Flow describes the sources for a person: "list_messages (call 1,
// untrusted), get_customer (call 3, readers [support@acme.example])"; a
// source with no call number (Seq 0: a label stated in a test) shows none.
func Flow(sources []Source) string {
	if len(sources) == 0 {
		return ""
	}
	var b strings.Builder
	for i, s := range sources {
		if i > 0 {
			b.WriteString(", ")
		}
		if s.Seq > 0 {
			fmt.Fprintf(&b, "%s (call %d, %s)", s.Tool, s.Seq, describe(s.Label))
		} else {
			fmt.Fprintf(&b, "%s (%s)", s.Tool, describe(s.Label))
		}
	}
	return b.String()
}

func describe(l Label) string {
	switch {
	case l.Untrusted && l.Readers != nil:
		return "untrusted, readers [" + strings.Join(l.Readers, " ") + "]"
	case l.Untrusted:
		return "untrusted"
	case l.Readers != nil:
		return "readers [" + strings.Join(l.Readers, " ") + "]"
	}
	return "trusted, public"
}

// labelRule is one compiled entry of the policy's labels section.
type labelRule struct {
	id string
	selector

	label Label
	// hasIntegrity and hasReaders say which parts the entry sets; the
	// other parts keep the default from the tool's annotations.
	hasIntegrity, hasReaders bool
	// resultLabels honours labels the tool attaches to its results.
	resultLabels bool
	// declassify: the tool's results do not carry its arguments' labels.
	declassify bool
}

// DefaultLabel is the label of a tool's results when no entry of the
// policy's labels section selects the tool: untrusted for a tool whose
// annotations say it reaches an open world (openWorldHint) and for every
// upstream server's tool (its results are written by someone else); trusted
// otherwise; public in both cases.
func DefaultLabel(meta ToolMeta) Label {
	switch meta.Source {
	case "", "builtin", "local":
		return Label{Untrusted: meta.OpenWorld}
	}
	return Label{Untrusted: true}
}

// SourceLabel returns the label of the tool's results and whether labels
// the tool attaches to a result (in its MCP _meta) are honoured: the first
// entry of the labels section that selects the tool (by name, glob and
// metadata) sets them; parts it leaves out, and tools no entry selects,
// take DefaultLabel. Result labels are honoured only where an entry says
// result_labels: true, and only ever make a label stricter (see
// ResultLabel).
func (c *Checker) SourceLabel(tool string, meta ToolMeta) (Label, bool) {
	def := DefaultLabel(meta)
	for _, r := range c.labels {
		if !r.selects(tool, &meta) {
			continue
		}
		l := def
		if r.hasIntegrity {
			l.Untrusted = r.label.Untrusted
		}
		if r.hasReaders {
			l.Readers = r.label.Readers
		}
		return l, r.resultLabels
	}
	return def, false
}

// Declassifies reports whether the tool's results are exempt from its
// arguments' labels: by default a result carries the join of the labels of
// the opaque handles passed in its arguments (a tool that returns its input
// must not launder it), unless the first entry of the labels section that
// selects the tool says declassify: true — the operator's statement that
// the tool's results never carry what it was given (a store that answers
// {"ok": true}, a classifier that answers one of a few words).
func (c *Checker) Declassifies(tool string, meta ToolMeta) bool {
	for _, r := range c.labels {
		if r.selects(tool, &meta) {
			return r.declassify
		}
	}
	return false
}

// ResultLabel reads the label a tool attached to one result, from the
// result's MCP _meta, in the shapes label-aware servers use:
//
//   - FIDES-shaped: {"security_label": {"integrity": "untrusted"|"trusted",
//     "confidentiality": "public" | {"readers": [...]}}} (also under
//     "label" or "labels"; integrity "low" means untrusted);
//   - the MCP trust-annotations draft's booleans: "untrusted": true,
//     "sensitive": true, "openWorldHint": true, "privateHint": true, and
//     "sensitiveHint": "medium"|"high" (at the top level of _meta or under
//     "annotations").
//
// A sensitive or private result with no readers named may be read by the
// principal only (readers [principal]). The answer is only ever joined into
// the tool's own label, so a result can make its label stricter, never
// weaker: "trusted" or "public" from a result change nothing. ok is false
// when meta carries no label.
func ResultLabel(meta map[string]any, principal string) (l Label, ok bool) {
	if len(meta) == 0 {
		return Label{}, false
	}
	private := false
	for _, k := range []string{"security_label", "label", "labels"} {
		m, isMap := meta[k].(map[string]any)
		if !isMap {
			continue
		}
		switch v := m["integrity"].(type) {
		case string:
			ok = true
			if s := strings.ToLower(v); s == "untrusted" || s == "low" {
				l.Untrusted = true
			}
		}
		switch v := m["confidentiality"].(type) {
		case string:
			ok = true
			if s := strings.ToLower(v); s != "public" && s != "" {
				private = true
			}
		case map[string]any:
			ok = true
			if rs, isList := v["readers"].([]any); isList {
				names := make([]string, 0, len(rs))
				for _, r := range rs {
					if s, isStr := r.(string); isStr && len(names) < 64 {
						names = append(names, capString(s, 128))
					}
				}
				l = l.Join(Label{Readers: NewReaders(names...)})
			} else {
				private = true
			}
		}
	}
	hints := []map[string]any{meta}
	if a, isMap := meta["annotations"].(map[string]any); isMap {
		hints = append(hints, a)
	}
	for _, h := range hints {
		if truthy(h["untrusted"]) || truthy(h["openWorldHint"]) || truthy(h["maliciousActivityHint"]) {
			l.Untrusted, ok = true, true
		}
		if truthy(h["sensitive"]) || truthy(h["privateHint"]) {
			private, ok = true, true
		}
		if s, isStr := h["sensitiveHint"].(string); isStr {
			ok = true
			if s = strings.ToLower(s); s == "medium" || s == "high" {
				private = true
			}
		}
	}
	if private && l.Readers == nil {
		l.Readers = NewReaders(principal)
	}
	return l, ok
}

func truthy(v any) bool {
	b, ok := v.(bool)
	return ok && b
}

// rawLabel is one entry of the labels section.
type rawLabel struct {
	Name      string            `yaml:"name"`
	Tools     []located[string] `yaml:"tools"`
	Match     *rawMatch         `yaml:"match"`
	Integrity *located[string]  `yaml:"integrity"`
	Readers   *located[any]     `yaml:"readers"`
	Result    *located[bool]    `yaml:"result_labels"`
	Declass   *located[bool]    `yaml:"declassify"`
}

// compileLabels checks the labels section.
func compileLabels(ps *problems, raw []located[rawLabel]) []*labelRule {
	var out []*labelRule
	for i := range raw {
		lr := &raw[i]
		rl := &lr.v
		r := &labelRule{id: fmt.Sprintf("labels[%d]", i)}
		if rl.Name != "" {
			r.id = rl.Name
		}
		r.selector = compileSelector(ps, r.id, lr.p, rl.Tools, rl.Match)
		if it := rl.Integrity; it != nil {
			switch it.v {
			case "trusted":
				r.hasIntegrity = true
			case "untrusted":
				r.hasIntegrity, r.label.Untrusted = true, true
			default:
				ps.at(it.p, "%s: integrity: want trusted or untrusted, got %q", r.id, capString(it.v, 40))
			}
		}
		if rd := rl.Readers; rd != nil {
			r.hasReaders = true
			switch v := rd.v.(type) {
			case string:
				if v != "public" {
					ps.at(rd.p, "%s: readers: want public or a list of readers, got %q", r.id, capString(v, 40))
				}
			case []any:
				names := make([]string, 0, len(v))
				for _, x := range v {
					s, isStr := x.(string)
					if !isStr || s == "" {
						ps.at(rd.p, "%s: readers: want non-empty strings, got %s", r.id, capString(strconv.Quote(fmt.Sprint(x)), 40))
						continue
					}
					names = append(names, s)
				}
				r.label.Readers = NewReaders(names...)
			default:
				ps.at(rd.p, "%s: readers: want public or a list of readers", r.id)
			}
		}
		if rl.Result != nil {
			r.resultLabels = rl.Result.v
		}
		if rl.Declass != nil {
			r.declassify = rl.Declass.v
		}
		if !r.hasIntegrity && !r.hasReaders && !r.resultLabels && rl.Declass == nil {
			ps.at(lr.p, "%s: want integrity, readers, result_labels or declassify", r.id)
		}
		out = append(out, r)
	}
	return out
}

// envLabel is a label as a `when` expression sees it:
//
//	label.integrity     "trusted" or "untrusted"
//	label.untrusted     true if untrusted (label.trusted: the opposite)
//	label.public        true if anyone may read
//	label.readers       who may read ([] when public)
//	label.sources       the tools whose results raised the label
type envLabel struct {
	Integrity string   `expr:"integrity"`
	Trusted   bool     `expr:"trusted"`
	Untrusted bool     `expr:"untrusted"`
	Public    bool     `expr:"public"`
	Readers   []string `expr:"readers"`
	Sources   []string `expr:"sources"`
}

// argLabels is arg_labels: for each top-level argument, Run.Label joined
// with the labels of the handles it holds.
func argLabels(req *Request, args map[string]any) map[string]envLabel {
	out := make(map[string]envLabel, len(args))
	for k := range args {
		l, ok := req.ArgLabels[k]
		if !ok {
			out[k] = newEnvLabel(req.Run.Label, req.Run.Flow)
			continue
		}
		out[k] = newEnvLabel(req.Run.Label.Join(l), flowOf(req))
	}
	return out
}

var emptyEnvLabel = envLabel{Integrity: "trusted", Trusted: true, Public: true, Readers: []string{}, Sources: []string{}}

func newEnvLabel(l Label, sources []Source) envLabel {
	e := envLabel{Integrity: l.Integrity(), Trusted: !l.Untrusted, Untrusted: l.Untrusted, Public: l.Public(),
		Readers: l.Readers, Sources: make([]string, 0, len(sources))}
	if e.Readers == nil {
		e.Readers = []string{}
	}
	for _, s := range sources {
		if !slices.Contains(e.Sources, s.Tool) {
			e.Sources = append(e.Sources, s.Tool)
		}
	}
	return e
}

// readsLabels reports whether a compiled expression reads label,
// run.label or arg_labels, and whether it reads arg_labels.
func readsLabels(prog *vm.Program) (labels, args bool) {
	root := prog.Node()
	var v labelWalker
	ast.Walk(&root, &v)
	return v.found, v.args
}

type labelWalker struct{ found, args bool }

func (w *labelWalker) Visit(n *ast.Node) {
	switch x := (*n).(type) {
	case *ast.IdentifierNode:
		switch x.Value {
		case "label":
			w.found = true
		case "arg_labels":
			w.found, w.args = true, true
		}
	case *ast.MemberNode:
		id, ok1 := x.Node.(*ast.IdentifierNode)
		key, ok2 := x.Property.(*ast.StringNode)
		if ok1 && id.Value == "run" && (!ok2 || key.Value == "label") {
			w.found = true
		}
	}
}

// compileApprovalWhen compiles a rule's approval_when.
func compileApprovalWhen(ps *problems, r *rule, approval bool, w *located[string], src []byte) {
	switch {
	case !approval:
		ps.at(w.p, "%s: approval_when needs require_approval: true", r.id)
	case strings.TrimSpace(w.v) == "":
		ps.at(w.p, "%s: approval_when: empty expression (omit it to require approval for every call)", r.id)
	case len(w.v) > MaxWhenBytes:
		ps.at(w.p, "%s: approval_when: expression longer than %d bytes", r.id, MaxWhenBytes)
	default:
		prog, usesArgs, _, err := compileWhen(w.v)
		if err != nil {
			p, msg := exprPos(w, src, err)
			ps.at(p, "%s: approval_when: %s", r.id, msg)
			return
		}
		r.approvalWhen, r.approvalWhenSrc, r.approvalArgs = prog, w.v, usesArgs
		l, a := readsLabels(prog)
		r.usesLabels = r.usesLabels || l
		r.usesArgLabels = r.usesArgLabels || a
	}
}
