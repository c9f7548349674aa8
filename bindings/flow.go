package bindings

import (
	"context"
	"sync"

	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/tools"
)

// labeler is implemented by Authorizers that label tool results for
// information-flow control (PolicyAuthorizer does, from the policy's labels
// section). SourceLabel returns the label of t's results and whether labels
// t attaches to a result (its MCP _meta) are honoured. An Authorizer that
// does not implement it gets policy.DefaultLabel from the tool's
// annotations, and result labels are ignored.
type labeler interface {
	SourceLabel(t *tools.Tool) (label policy.Label, resultLabels bool)
}

// SourceLabel implements labeler.
func (a *PolicyAuthorizer) SourceLabel(t *tools.Tool) (policy.Label, bool) {
	return a.checker.SourceLabel(t.Name, ToolMeta(t))
}

// sourceLabel is the label of t's results under the broker's authorizer.
func (b *Broker) sourceLabel(t *tools.Tool) (policy.Label, bool) {
	if l, ok := b.authorizer().(labeler); ok {
		return l.SourceLabel(t)
	}
	return policy.DefaultLabel(ToolMeta(t)), false
}

// runFlow is a run's information-flow state: the join of the labels of
// every result the program has read, and the results that raised it. The
// broker joins a result's label before the guest sees the result, so every
// call the program makes afterwards — the only calls its data can reach —
// carries it. Calls made before a result arrived do not, and need not.
type runFlow struct {
	mu      sync.Mutex
	label   policy.Label
	sources []policy.Source
	handles handles // opaque handles (handles.go)
}

// snapshot returns the run's label and flow; the slice is not modified
// afterwards (read joins append to a copy once it is shared).
func (f *runFlow) snapshot() (policy.Label, []policy.Source) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.label, f.sources[:len(f.sources):len(f.sources)]
}

// join raises the run's label by l, the label of a result the program
// reads, and records the source when it raised the label.
func (f *runFlow) join(l policy.Label, src policy.Source) {
	if l.IsZero() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.label.AtLeast(l) { // the common case once a run has read its sources
		return
	}
	nl := f.label.Join(l)
	if nl.Untrusted == f.label.Untrusted && sameReaders(nl.Readers, f.label.Readers) {
		return
	}
	f.label = nl
	if len(f.sources) < policy.MaxSources {
		f.sources = append(f.sources, src)
	}
}

func sameReaders(a, b []string) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// labelsOff turns label tracking off: set only by the overhead benchmark
// (BenchmarkLabelOverhead) before it makes runs, never in production.
var labelsOff bool

// labelCall fills the flow fields of info for a call made now.
func (r *run) labelCall(info *CallInfo) {
	if labelsOff {
		return
	}
	info.Label, info.Flow = r.flow.snapshot()
}

// resultMeta is the _meta a tool reported for one result (see
// tools.ReportResultMeta): the last report wins.
type resultMeta struct {
	mu   sync.Mutex
	meta map[string]any
}

func (m *resultMeta) set(meta map[string]any) {
	m.mu.Lock()
	m.meta = meta
	m.mu.Unlock()
}

func (m *resultMeta) get() map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.meta
}

// withResultMeta returns ctx with a listener for the _meta t reports, when
// the policy honours t's result labels; otherwise ctx as is (most calls:
// no allocation).
func (r *run) withResultMeta(ctx context.Context, t *tools.Tool) (context.Context, *resultMeta) {
	if labelsOff || r.caller != tools.Code {
		return ctx, nil
	}
	if _, honour := r.b.sourceLabel(t); !honour {
		return ctx, nil
	}
	m := new(resultMeta)
	return tools.WithResultMeta(ctx, m.set), m
}

// labelResult returns the label of t's result or error (call seq): the
// tool's source label, made stricter by the labels the tool attached to
// the result when the policy honours them for t, joined with the labels of
// the handles in its arguments (unless the policy says t declassifies: a
// tool that returns its input must not launder a handle) and with the
// labels of the text about other tools it returned (text, discovery).
// Unless the result is kept as an opaque handle (join false), the label is
// joined into the run, each source on its own so that a denial names it.
func (r *run) labelResult(t *tools.Tool, seq int, meta *resultMeta, join bool, args *handleLabels, text *textSources) policy.Label {
	if labelsOff {
		return policy.Label{}
	}
	l, honour := r.b.sourceLabel(t)
	if honour && meta != nil {
		if ml, ok := policy.ResultLabel(meta.get(), r.principal.ID); ok {
			l = l.Join(ml) // only ever stricter
		}
	}
	own := l
	var from []policy.Source
	if args != nil && !args.label.IsZero() && !r.b.declassifies(t) {
		l = l.Join(args.label)
		from = args.sources
	}
	if text != nil {
		for _, src := range text.sources(r, seq) {
			l = l.Join(src.Label)
			from = append(from, src)
		}
	}
	if join && r.caller == tools.Code {
		for _, src := range from {
			r.flow.join(src.Label, src)
		}
		r.flow.join(own, policy.Source{Tool: t.Name, Seq: seq, Label: own})
	}
	return l
}

// declassifier is implemented by Authorizers whose policy can say that a
// tool's results do not carry its arguments' labels (PolicyAuthorizer:
// declassify: true in the labels section).
type declassifier interface {
	Declassifies(t *tools.Tool) bool
}

// Declassifies implements declassifier.
func (a *PolicyAuthorizer) Declassifies(t *tools.Tool) bool {
	return a.checker.Declassifies(t.Name, ToolMeta(t))
}

// declassifies reports whether t's results are exempt from its arguments'
// labels under the broker's authorizer: never, unless it says so.
func (b *Broker) declassifies(t *tools.Tool) bool {
	d, ok := b.authorizer().(declassifier)
	return ok && d.Declassifies(t)
}

// textLabel is the label of text about t written by whoever serves it (its
// description, its schema): an upstream server's tool's text is as
// trusted as its results (untrusted unless the policy's labels say the
// server is trusted); built-in and local tools' text is the operator's.
// Only integrity: a description names no readers.
func (b *Broker) textLabel(t *tools.Tool) policy.Label {
	switch t.Source {
	case "", "builtin", "local":
		return policy.Label{}
	}
	l, _ := b.sourceLabel(t)
	return policy.Label{Untrusted: l.Untrusted}
}

// labelText joins into the run the label of t's own text that a message
// about t carries (an E_TOOL_ARGS message quotes its schema).
func (r *run) labelText(t *tools.Tool, seq int) {
	if labelsOff || r.caller != tools.Code {
		return
	}
	if l := r.b.textLabel(t); !l.IsZero() {
		r.flow.join(l, policy.Source{Tool: t.Name, Seq: seq, Label: l})
	}
}

// textSources collects the tools whose text (description, signature) a
// discovery call returns, so that its result carries their text labels.
type textSources struct {
	mu    sync.Mutex
	tools []*tools.Tool
}

type textSourcesKey struct{}

// withTextSources returns ctx with a collector of text sources for a
// discovery tool called from a program, else ctx as is.
func (r *run) withTextSources(ctx context.Context, t *tools.Tool) (context.Context, *textSources) {
	if labelsOff || r.caller != tools.Code || !IsDiscovery(t.Name) {
		return ctx, nil
	}
	ts := new(textSources)
	return context.WithValue(ctx, textSourcesKey{}, ts), ts
}

// reportText records that the answer of the call in ctx holds text of t.
func reportText(ctx context.Context, t *tools.Tool) {
	ts, ok := ctx.Value(textSourcesKey{}).(*textSources)
	if !ok {
		return
	}
	ts.mu.Lock()
	ts.tools = append(ts.tools, t)
	ts.mu.Unlock()
}

// sources returns the labelled text sources, one per label: the first
// tool whose text carries it, named with the discovery call's seq.
func (ts *textSources) sources(r *run, seq int) []policy.Source {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []policy.Source
	var seen policy.Label
	for _, t := range ts.tools {
		l := r.b.textLabel(t)
		if l.IsZero() || seen.AtLeast(l) {
			continue
		}
		seen = seen.Join(l)
		out = append(out, policy.Source{Tool: t.Name, Seq: seq, Label: l})
	}
	return out
}

// Label returns the run's final label: the join of the labels of every
// result the program read.
func (h *runHost) Label() (policy.Label, []policy.Source) { return h.flow.snapshot() }

// LabelMeta is the _meta form of a label that sandcall attaches to a
// run_code result (and keeps on its read_output pages), so that a
// label-aware client treats the output accordingly:
//
//	"security_label": {"integrity": "untrusted", "confidentiality":
//	    "public" | {"readers": [...]}, "sources": ["list_messages", ...]}
//	"untrusted": true|false, "sensitive": true|false
//
// The first is FIDES-shaped; the booleans are the MCP trust-annotations
// draft's (sensitive: the result may not be read by everyone).
func LabelMeta(l policy.Label, sources []policy.Source) map[string]any {
	sl := map[string]any{"integrity": l.Integrity()}
	if l.Public() {
		sl["confidentiality"] = "public"
	} else {
		sl["confidentiality"] = map[string]any{"readers": append([]string{}, l.Readers...)}
	}
	names := make([]string, 0, len(sources))
	for _, s := range sources {
		dup := false
		for _, n := range names {
			dup = dup || n == s.Tool
		}
		if !dup {
			names = append(names, s.Tool)
		}
	}
	sl["sources"] = names
	return map[string]any{"security_label": sl, "untrusted": l.Untrusted, "sensitive": !l.Public()}
}
