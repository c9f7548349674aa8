package policy

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestLabelLattice(t *testing.T) {
	ls := []Label{
		{},
		{Untrusted: true},
		{Readers: NewReaders("a", "b")},
		{Readers: NewReaders("b", "c")},
		{Untrusted: true, Readers: NewReaders("a")},
		{Readers: []string{}},
	}
	for _, x := range ls {
		if !reflect.DeepEqual(x.Join(x), x) && !(x.Readers != nil && len(x.Readers) == 0) {
			t.Errorf("join not idempotent for %v: %v", x, x.Join(x))
		}
		for _, y := range ls {
			xy, yx := x.Join(y), y.Join(x)
			if xy.Untrusted != yx.Untrusted || strings.Join(xy.Readers, ",") != strings.Join(yx.Readers, ",") || xy.Public() != yx.Public() {
				t.Errorf("join not commutative: %v ⊔ %v = %v, %v", x, y, xy, yx)
			}
			if !xy.AtLeast(x) || !xy.AtLeast(y) {
				t.Errorf("%v ⊔ %v = %v is not at least as strict as both", x, y, xy)
			}
			for _, z := range ls {
				a, b := x.Join(y).Join(z), x.Join(y.Join(z))
				if a.String() != b.String() {
					t.Errorf("join not associative: %v %v", a, b)
				}
			}
		}
	}
	got := Label{Readers: NewReaders("a", "b")}.Join(Label{Readers: NewReaders("b", "c")})
	if !reflect.DeepEqual(got.Readers, []string{"b"}) {
		t.Errorf("readers meet = %v", got.Readers)
	}
	if got := (Label{Readers: NewReaders("a")}).Join(Label{Readers: NewReaders("b")}); got.Public() || len(got.Readers) != 0 {
		t.Errorf("disjoint readers must leave nobody, not public: %v", got)
	}
	if (Label{}).AtLeast(Label{Untrusted: true}) || (Label{}).AtLeast(Label{Readers: NewReaders("a")}) {
		t.Error("bottom is at least as strict as a stricter label")
	}
}

func TestSourceLabel(t *testing.T) {
	c := mustParse(t, `version: 1
labels:
  - tools: [internal_search]
    integrity: trusted
  - match: {source: "corp*"}
    integrity: trusted
    readers: [staff]
  - tools: ["crm_*"]
    readers: [sales, support]
    result_labels: true
  - tools: [web_fetch]
    result_labels: true
`)
	cases := []struct {
		tool   string
		meta   ToolMeta
		want   Label
		result bool
	}{
		{"calc", ToolMeta{}, Label{}, false},
		{"calc", ToolMeta{Source: "local"}, Label{}, false},
		{"browse", ToolMeta{OpenWorld: true}, Label{Untrusted: true}, false},
		{"issue_read", ToolMeta{Source: "github"}, Label{Untrusted: true}, false},
		{"internal_search", ToolMeta{Source: "github", OpenWorld: true}, Label{}, false},
		{"wiki", ToolMeta{Source: "corpwiki"}, Label{Readers: []string{"staff"}}, false},
		{"crm_get", ToolMeta{}, Label{Readers: []string{"sales", "support"}}, true},
		{"crm_get", ToolMeta{Source: "crm"}, Label{Untrusted: true, Readers: []string{"sales", "support"}}, true},
		{"web_fetch", ToolMeta{OpenWorld: true}, Label{Untrusted: true}, true},
	}
	for _, tc := range cases {
		got, res := c.SourceLabel(tc.tool, tc.meta)
		if got.String() != tc.want.String() || res != tc.result {
			t.Errorf("%s %+v: got %v %v, want %v %v", tc.tool, tc.meta, got, res, tc.want, tc.result)
		}
	}
	if got, _ := Default().SourceLabel("x", ToolMeta{Source: "up"}); !got.Untrusted {
		t.Error("an upstream tool is trusted without a policy")
	}
}

// TestDeclassifies: only a labels entry that says declassify: true exempts
// a tool's results from its arguments' labels; the first entry that
// selects the tool decides.
func TestDeclassifies(t *testing.T) {
	c := mustParse(t, `version: 1
labels:
  - tools: [store_doc]
    declassify: true
  - tools: ["store_*"]
    integrity: trusted
  - tools: [classify]
    integrity: trusted
    declassify: true
`)
	for tool, want := range map[string]bool{"store_doc": true, "store_other": false, "classify": true, "echo": false} {
		if got := c.Declassifies(tool, ToolMeta{}); got != want {
			t.Errorf("Declassifies(%s) = %v, want %v", tool, got, want)
		}
	}
	if Default().Declassifies("store_doc", ToolMeta{}) {
		t.Error("a tool declassifies without a policy")
	}
}

// A result's own label is read in the shapes label-aware servers use, and
// claims of trust or publicity read as nothing: joined into the tool's
// label they can never weaken it.
func TestResultLabel(t *testing.T) {
	cases := []struct {
		name string
		meta map[string]any
		want Label
		ok   bool
	}{
		{"none", nil, Label{}, false},
		{"unrelated", map[string]any{"progressToken": 1}, Label{}, false},
		{"fides untrusted", map[string]any{"security_label": map[string]any{"integrity": "untrusted"}}, Label{Untrusted: true}, true},
		{"fides low", map[string]any{"label": map[string]any{"integrity": "low"}}, Label{Untrusted: true}, true},
		{"fides readers", map[string]any{"security_label": map[string]any{"confidentiality": map[string]any{"readers": []any{"b", "a", "b"}}}},
			Label{Readers: []string{"a", "b"}}, true},
		{"fides private", map[string]any{"security_label": map[string]any{"confidentiality": "private"}}, Label{Readers: []string{"alice"}}, true},
		{"draft booleans", map[string]any{"untrusted": true, "sensitive": true}, Label{Untrusted: true, Readers: []string{"alice"}}, true},
		{"sep hints", map[string]any{"annotations": map[string]any{"openWorldHint": true, "sensitiveHint": "high"}},
			Label{Untrusted: true, Readers: []string{"alice"}}, true},
		{"low sensitivity", map[string]any{"sensitiveHint": "low"}, Label{}, true},
		{"claims trust", map[string]any{"security_label": map[string]any{"integrity": "trusted", "confidentiality": "public"}, "untrusted": false}, Label{}, true},
		{"wrong types", map[string]any{"untrusted": "yes", "security_label": "trusted"}, Label{}, false},
	}
	for _, tc := range cases {
		got, ok := ResultLabel(tc.meta, "alice")
		if got.String() != tc.want.String() || ok != tc.ok {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, got, ok, tc.want, tc.ok)
		}
		base := Label{Untrusted: true, Readers: NewReaders("alice", "bob")}
		if j := base.Join(got); !j.AtLeast(base) {
			t.Errorf("%s: result label weakened %v to %v", tc.name, base, j)
		}
	}
}

func TestFlowRule(t *testing.T) {
	c := mustParse(t, `version: 1
rules:
  - name: mail
    tools: [send_email]
    when: 'label.public || all(args.to, # in label.readers)'
    message: recipients may not read the data
  - name: destroy
    match: {destructive: true}
    allowed_callers: [direct, code]
    when: '!label.untrusted'
  - name: post
    tools: [post_comment]
    require_approval: true
    approval_when: 'run.label.untrusted'
  - name: plain
    tools: [other]
    when: 'args.n < 3'
`)
	flow := []Source{{Tool: "list_messages", Seq: 1, Label: Label{Untrusted: true}},
		{Tool: "get_customer", Seq: 2, Label: Label{Readers: NewReaders("support")}}}
	run := Run{Label: Label{Untrusted: true, Readers: NewReaders("support")}, Flow: flow}

	d := c.Decide(&Request{Caller: Code, Tool: "send_email", Args: []byte(`{"to":["x@evil"]}`), Run: run})
	if d.Allow || d.Rule != "mail" || !strings.Contains(d.Message, "recipients may not read the data (data flow: list_messages (call 1, untrusted), get_customer (call 2, readers [support]))") ||
		!strings.Contains(d.Reason, "flow: list_messages") || d.Flow == "" {
		t.Errorf("exfiltration: %+v", d)
	}
	if d := c.Decide(&Request{Caller: Code, Tool: "send_email", Args: []byte(`{"to":["support"]}`), Run: run}); !d.Allow {
		t.Errorf("mail to a reader: %+v", d)
	}
	if d := c.Decide(&Request{Caller: Code, Tool: "send_email", Args: []byte(`{"to":["anyone"]}`)}); !d.Allow {
		t.Errorf("mail after reading nothing: %+v", d)
	}
	if d := c.Decide(&Request{Caller: Code, Tool: "drop", Meta: ToolMeta{Destructive: true}, Run: run}); d.Allow || d.Rule != "destroy" {
		t.Errorf("destructive after untrusted: %+v", d)
	}
	// An opaque handle's label taints only the call it is passed to.
	handle := Request{Caller: Code, Tool: "drop", Meta: ToolMeta{Destructive: true},
		Label: Label{Untrusted: true}, LabelSources: []Source{{Tool: "web_fetch", Seq: 4, Label: Label{Untrusted: true}}}}
	if d := c.Decide(&handle); d.Allow || !strings.Contains(d.Flow, "web_fetch (call 4, untrusted)") {
		t.Errorf("untrusted handle: %+v", d)
	}
	if d := c.Decide(&Request{Caller: Code, Tool: "drop", Meta: ToolMeta{Destructive: true}}); !d.Allow {
		t.Errorf("destructive after nothing: %+v", d)
	}
	if d := c.Decide(&Request{Caller: Code, Tool: "post_comment", Run: run}); !d.Allow || !d.RequireApproval || !strings.Contains(d.Flow, "list_messages") {
		t.Errorf("approval after untrusted: %+v", d)
	}
	if d := c.Decide(&Request{Caller: Code, Tool: "post_comment"}); !d.Allow || d.RequireApproval {
		t.Errorf("no approval needed when trusted: %+v", d)
	}
	if d := c.Decide(&Request{Caller: Code, Tool: "other", Args: []byte(`{"n":5}`), Run: run}); d.Allow || d.Flow != "" || strings.Contains(d.Message, "flow") {
		t.Errorf("a rule that reads no label names no flow: %+v", d)
	}
}

func TestLabelsProblems(t *testing.T) {
	cases := map[string]string{
		"labels: [{tools: [a], integrity: shaky}]":                                   "integrity: want trusted or untrusted",
		"labels: [{tools: [a], readers: everyone}]":                                  "readers: want public or a list",
		"labels: [{tools: [a], readers: [1, \"\"]}]":                                 "readers: want non-empty strings",
		"labels: [{tools: [a]}]":                                                     "want integrity, readers, result_labels or declassify",
		"labels: [{tools: [\"[\"], integrity: trusted}]":                             "bad glob",
		"rules: [{tools: [a], approval_when: 'true'}]":                               "approval_when needs require_approval",
		"rules: [{tools: [a], require_approval: true, approval_when: 'label.nope'}]": "approval_when",
		"labels: [{tools: [a], integrity: trusted, extra: 1}]":                       "unknown key",
	}
	for src, want := range cases {
		_, err := Parse("p.yaml", []byte("version: 1\n"+src+"\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", src, err, want)
		}
	}
}

// FuzzResultLabel: a result's _meta is an upstream's to write. Reading it
// never panics, and joining what it yields never weakens a label.
func FuzzResultLabel(f *testing.F) {
	f.Add([]byte(`{"security_label":{"integrity":"trusted","confidentiality":"public"}}`))
	f.Add([]byte(`{"security_label":{"confidentiality":{"readers":["a","b"]}},"untrusted":true}`))
	f.Add([]byte(`{"annotations":{"sensitiveHint":"high","openWorldHint":true}}`))
	f.Add([]byte(`{"label":{"confidentiality":{"readers":[1,null,{}]}},"labels":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var meta map[string]any
		if json.Unmarshal(b, &meta) != nil {
			return
		}
		l, _ := ResultLabel(meta, "p")
		for _, base := range []Label{{}, {Untrusted: true}, {Readers: NewReaders("p", "q")}} {
			if j := base.Join(l); !j.AtLeast(base) {
				t.Fatalf("%s weakened %v to %v", b, base, j)
			}
		}
		if len(l.Readers) > 64 {
			t.Fatalf("%d readers", len(l.Readers))
		}
	})
}

func TestSuiteArgLabels(t *testing.T) {
	dir := t.TempDir()
	pol := dir + "/p.yaml"
	suite := dir + "/p_test.yaml"
	writeFile(t, pol, "version: 1\nrules: [{name: r, tools: [mail], when: '!arg_labels.to.untrusted'}]\n")
	writeFile(t, suite, `policy: p.yaml
cases:
  - {name: untrusted body, tool: mail, caller: code, args: {to: [a], body: x}, arg_labels: {body: {integrity: untrusted}}, expect: allow}
  - {name: untrusted to, tool: mail, caller: code, args: {to: [a], body: x}, arg_labels: {to: {integrity: untrusted, sources: [web]}}, expect: deny}
  - {name: untrusted run, tool: mail, caller: code, args: {to: [a], body: x}, run: {label: {integrity: untrusted}}, expect: deny}
`)
	s, err := LoadSuite(suite)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Run() {
		if !r.Pass {
			t.Errorf("%s: %s (%s)", r.Case.Name, r.Why, r.Got.Reason)
		}
	}
}

func writeFile(t *testing.T, name, s string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
