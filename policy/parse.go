package policy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	exprfile "github.com/expr-lang/expr/file"
	"github.com/goccy/go-yaml"
	yast "github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Load reads and compiles the policy file at path. Problems are reported as
// an *Error whose positions name path.
func Load(path string) (*Checker, error) {
	src, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src)
}

// readFile reads at most MaxFileBytes+1 bytes of the file at path (the
// caller says what is over MaxFileBytes); an error is an *Error naming
// path.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Problems: []Problem{{File: path, Msg: errText(err)}}}
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, &Error{Problems: []Problem{{File: path, Msg: errText(err)}}}
	}
	return src, nil
}

// errText is err's text without the path an *os.PathError repeats.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

// Parse compiles a policy from src; name is used in the positions of
// problems (a file name). It returns an *Error on any problem: a policy that
// does not compile is never partly applied.
func Parse(name string, src []byte) (*Checker, error) {
	ps := &problems{file: name}
	if len(src) > MaxFileBytes {
		ps.add(0, 0, "the file is larger than %d bytes", MaxFileBytes)
		return nil, ps.err()
	}
	raw, ok := decode(ps, src)
	if !ok {
		return nil, ps.err()
	}
	c := compile(ps, raw, src)
	if err := ps.err(); err != nil {
		return nil, err
	}
	c.name = name
	return c, nil
}

// located is a YAML value with the position of its node.
type located[T any] struct {
	v    T
	p    pos
	node yast.Node
}

// UnmarshalYAML implements yaml.NodeUnmarshaler.
func (l *located[T]) UnmarshalYAML(n yast.Node) error {
	l.node = n
	l.p = nodePos(n)
	err := yaml.NodeToValue(n, &l.v, yaml.DisallowUnknownField())
	var ye yaml.Error
	var pe *posError
	if err != nil && !errors.As(err, &ye) && !errors.As(err, &pe) {
		// A value error without a token (a bad duration, say): give it
		// this node's position.
		return &posError{p: l.p, msg: oneLine(err.Error())}
	}
	return err
}

// posError is a decoding error at a known position.
type posError struct {
	p   pos
	msg string
}

func (e *posError) Error() string { return e.msg }

// nodePos is the position of a node: of its first key for a mapping.
func nodePos(n yast.Node) pos {
	if m, ok := n.(*yast.MappingNode); ok && len(m.Values) > 0 {
		n = m.Values[0].Key
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return pos{tk.Position.Line, tk.Position.Column}
	}
	return pos{}
}

type rawFile struct {
	Version  *located[int]       `yaml:"version"`
	Defaults *rawDefaults        `yaml:"defaults"`
	Rules    []located[rawRule]  `yaml:"rules"`
	Labels   []located[rawLabel] `yaml:"labels"`
	Plans    []located[rawPlan]  `yaml:"plans"` // plans.go
}

type rawDefaults struct {
	AllowedCallers *[]located[string] `yaml:"allowed_callers"`
}

type rawRule struct {
	Name            string             `yaml:"name"`
	Tools           []located[string]  `yaml:"tools"`
	Match           *rawMatch          `yaml:"match"`
	AllowedCallers  *[]located[string] `yaml:"allowed_callers"`
	When            *located[string]   `yaml:"when"`
	Message         string             `yaml:"message"`
	Hint            string             `yaml:"hint"`
	MaxCallsPerRun  *located[int]      `yaml:"max_calls_per_run"`
	Rate            *located[rawRate]  `yaml:"rate"`
	RequireApproval bool               `yaml:"require_approval"`
	ApprovalWhen    *located[string]   `yaml:"approval_when"`
	LogArgs         bool               `yaml:"log_args"`
	Pin             bool               `yaml:"pin"`
}

type rawMatch struct {
	ReadOnly    *bool            `yaml:"read_only"`
	Destructive *bool            `yaml:"destructive"`
	Idempotent  *bool            `yaml:"idempotent"`
	OpenWorld   *bool            `yaml:"open_world"`
	Source      *located[string] `yaml:"source"`
}

type rawRate struct {
	Calls int           `yaml:"calls"`
	Per   time.Duration `yaml:"per"`
}

// decode parses the YAML strictly: one document, no anchors or aliases, no
// unknown or duplicate keys.
func decode(ps *problems, src []byte) (raw *rawFile, ok bool) {
	defer func() { // the YAML library is third-party code on operator input
		if p := recover(); p != nil {
			ps.add(0, 0, "the YAML could not be parsed: %v", p)
			raw, ok = nil, false
		}
	}()
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		yamlProblem(ps, err)
		return nil, false
	}
	var body yast.Node
	for _, d := range f.Docs {
		if d.Body == nil {
			continue
		}
		if body != nil {
			ps.at(nodePos(d.Body), "the file holds more than one YAML document")
			return nil, false
		}
		body = d.Body
	}
	if body == nil {
		ps.add(1, 1, "the file is empty: want version: 1 and rules")
		return nil, false
	}
	var bad yast.Node
	yast.Walk(visitFunc(func(n yast.Node) bool {
		switch n.Type() {
		case yast.AnchorType, yast.AliasType, yast.MergeKeyType:
			if bad == nil {
				bad = n
			}
			return false
		}
		return bad == nil
	}), body)
	if bad != nil {
		ps.at(nodePos(bad), "YAML anchors, aliases and merge keys are not supported in policy files")
		return nil, false
	}
	raw = new(rawFile)
	if err := yaml.NodeToValue(body, raw, yaml.DisallowUnknownField()); err != nil {
		yamlProblem(ps, err)
		return nil, false
	}
	return raw, true
}

type visitFunc func(yast.Node) bool

func (f visitFunc) Visit(n yast.Node) yast.Visitor {
	if n == nil || !f(n) {
		return nil
	}
	return f
}

// yamlProblem reports a YAML library error at its token's position, without
// the library's source excerpt.
func yamlProblem(ps *problems, err error) {
	var pe *posError
	if errors.As(err, &pe) {
		ps.at(pe.p, "%s", pe.msg)
		return
	}
	var ye yaml.Error
	if errors.As(err, &ye) {
		msg := ye.GetMessage()
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			ps.add(tk.Position.Line, tk.Position.Column, "%s", tidyYAMLMessage(msg))
			return
		}
		ps.add(0, 0, "%s", tidyYAMLMessage(msg))
		return
	}
	ps.add(0, 0, "%s", oneLine(err.Error()))
}

var typeMessage = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^cannot unmarshal (\S+) into Go (?:struct field \S+|value) of type (\S+)`)
})

// tidyYAMLMessage rewrites the library's messages in the policy's terms:
// no Go type or field names.
func tidyYAMLMessage(s string) string {
	s = oneLine(s)
	if strings.HasPrefix(s, "unknown field ") {
		return "unknown key " + strings.TrimPrefix(s, "unknown field ")
	}
	if m := typeMessage().FindStringSubmatch(s); m != nil {
		return "want " + yamlKind(m[2]) + ", got " + yamlKind(m[1])
	}
	return s
}

func yamlKind(goType string) string {
	switch {
	case goType == "int" || strings.HasPrefix(goType, "uint") || strings.HasPrefix(goType, "int") || goType == "integer":
		return "an integer"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	case goType == "time.Duration":
		return "a duration (e.g. 1m)"
	case strings.HasPrefix(goType, "[]") || goType == "array" || goType == "sequence":
		return "a list"
	case strings.HasPrefix(goType, "map") || strings.Contains(goType, "raw") || goType == "mapping" || goType == "object":
		return "a mapping"
	}
	return goType
}

var (
	namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.:-]{0,63}$`) })
	reserved    = map[string]bool{"default": true, "defaults": true, "default.destructive_direct_only": true,
		"tool.allowed_callers": true, "policy.error": true, "authorizer.panic": true, "default.approval": true}
)

const (
	maxRules      = 10000
	maxTextBytes  = 1 << 10 // message, hint
	maxRateCalls  = 1_000_000
	maxQuotaCalls = 1_000_000
)

// compile checks raw and builds the Checker, reporting every problem.
func compile(ps *problems, raw *rawFile, src []byte) *Checker {
	c := &Checker{rates: newRateTable()}
	switch {
	case raw.Version == nil:
		ps.add(1, 1, "version: required (write version: 1)")
	case raw.Version.v != 1:
		ps.at(raw.Version.p, "version: unsupported version %d (want 1)", raw.Version.v)
	}
	if raw.Defaults != nil && raw.Defaults.AllowedCallers != nil {
		c.defaults = compileCallers(ps, "defaults", *raw.Defaults.AllowedCallers)
		c.hasDefaults = true
	}
	c.labels = compileLabels(ps, raw.Labels)
	if len(raw.Rules) > maxRules {
		ps.add(0, 0, "rules: %d rules, over the limit of %d", len(raw.Rules), maxRules)
		return c
	}
	names := map[string]int{}
	for i := range raw.Rules {
		lr := &raw.Rules[i]
		rr := &lr.v
		r := &rule{index: i, id: fmt.Sprintf("rules[%d]", i), pos: lr.p}
		if rr.Name != "" {
			switch {
			case !namePattern().MatchString(rr.Name):
				ps.at(lr.p, "%s: name %q: want a letter then letters, digits, _ . : or -, at most 64", r.id, capString(rr.Name, 80))
			case reserved[rr.Name]:
				ps.at(lr.p, "%s: name %q is reserved", r.id, rr.Name)
			case names[rr.Name] > 0:
				ps.at(lr.p, "%s: name %q is already used by rules[%d]", r.id, rr.Name, names[rr.Name]-1)
			default:
				names[rr.Name] = i + 1
				r.id = rr.Name
			}
		}
		r.selector = compileSelector(ps, r.id, lr.p, rr.Tools, rr.Match)
		if rr.AllowedCallers != nil {
			r.callers = compileCallers(ps, r.id, *rr.AllowedCallers)
			r.hasCallers = true
		}
		if w := rr.When; w != nil {
			r.whenSrc = w.v
			if exprOK(ps, r.id, "when", w) {
				prog, usesArgs, keys, err := compileWhen(w.v)
				if err != nil {
					p, msg := exprPos(w, src, err)
					ps.at(p, "%s: when: %s", r.id, msg)
				} else {
					r.when, r.whenArgs, r.argKeys = prog, usesArgs, keys
					r.usesLabels, r.usesArgLabels = readsLabels(prog)
				}
			}
		}
		if w := rr.ApprovalWhen; w != nil {
			compileApprovalWhen(ps, r, rr.RequireApproval, w, src)
		}
		r.message = rr.Message
		r.hint = rr.Hint
		if len(r.message) > maxTextBytes || len(r.hint) > maxTextBytes {
			ps.at(lr.p, "%s: message and hint are capped at %d bytes", r.id, maxTextBytes)
		}
		if q := rr.MaxCallsPerRun; q != nil {
			if q.v < 0 || q.v > maxQuotaCalls {
				ps.at(q.p, "%s: max_calls_per_run: want 0 to %d, got %d", r.id, maxQuotaCalls, q.v)
			} else if q.v == 0 {
				ps.at(q.p, "%s: max_calls_per_run: 0 would never allow a call from a run; use allowed_callers: [direct] instead", r.id)
			}
			r.maxCalls = q.v
		}
		if rt := rr.Rate; rt != nil {
			switch {
			case rt.v.Calls <= 0 || rt.v.Calls > maxRateCalls:
				ps.at(rt.p, "%s: rate.calls: want 1 to %d, got %d", r.id, maxRateCalls, rt.v.Calls)
			case rt.v.Per < time.Millisecond || rt.v.Per > 31*24*time.Hour:
				ps.at(rt.p, "%s: rate.per: want a duration from 1ms to 744h (e.g. 1m), got %s", r.id, rt.v.Per)
			default:
				r.rate = &rateSpec{calls: rt.v.Calls, per: rt.v.Per}
			}
		}
		r.allowReason = "allowed by " + r.id
		r.approval = rr.RequireApproval
		r.logArgs = rr.LogArgs
		r.pin = rr.Pin
		c.rules = append(c.rules, r)
	}
	c.plans = compilePlans(ps, raw.Plans, names, src)
	return c
}

// compileSelector compiles the tools list and match of a rule or labels
// entry (id, at p): no list selects every tool, names with glob characters
// are globs, match selects by metadata.
func compileSelector(ps *problems, id string, p pos, list []located[string], m *rawMatch) selector {
	var s selector
	if list == nil {
		s.anyTool = true
	} else if len(list) == 0 {
		ps.at(p, "%s: tools: empty list (omit tools to match every tool)", id)
	}
	for _, t := range list {
		switch {
		case t.v == "":
			ps.at(t.p, "%s: tools: empty tool name", id)
		case strings.ContainsAny(t.v, "*?["):
			if _, err := path.Match(t.v, ""); err != nil {
				ps.at(t.p, "%s: tools: bad glob %q: %v", id, t.v, err)
				continue
			}
			s.globs = append(s.globs, compileGlob(t.v))
		default:
			if s.exact == nil {
				s.exact = map[string]struct{}{}
			}
			s.exact[t.v] = struct{}{}
		}
	}
	if m != nil {
		s.match = metaMatch{readOnly: m.ReadOnly, destructive: m.Destructive,
			idempotent: m.Idempotent, openWorld: m.OpenWorld}
		if m.Source != nil {
			if _, err := path.Match(m.Source.v, ""); err != nil || m.Source.v == "" {
				ps.at(m.Source.p, "%s: match.source: bad name or glob %q", id, m.Source.v)
			}
			s.match.sources = []glob{compileGlob(m.Source.v)}
		}
	}
	return s
}

func compileCallers(ps *problems, where string, list []located[string]) callers {
	var cs callers
	for _, s := range list {
		b := callerBit(s.v)
		if b == 0 {
			ps.at(s.p, "%s: allowed_callers: unknown caller %q (want direct or code)", where, capString(s.v, 40))
			continue
		}
		cs |= b
	}
	return cs
}

// exprPos maps an expr error to a position in the file: the column of the
// error inside the `when` string when the string's layout allows it (a
// one-line plain or quoted scalar, or a literal block), else the string's
// start.
func exprPos(w *located[string], src []byte, err error) (pos, string) {
	var fe *exprfile.Error
	if !errors.As(err, &fe) {
		return w.p, oneLine(err.Error())
	}
	msg := fe.Message
	p := w.p
	switch n := w.node.(type) {
	case *yast.StringNode:
		tk := n.GetToken()
		if fe.Line <= 1 && tk != nil && tk.Position != nil && !strings.Contains(w.v, "\n") {
			col := tk.Position.Column + fe.Column
			if tk.Type == token.SingleQuoteType || tk.Type == token.DoubleQuoteType {
				col++
			}
			p = pos{tk.Position.Line, col}
		}
	case *yast.LiteralNode:
		// A literal block keeps its lines: line k of the expression is
		// line k of the block's content, after the block's indentation,
		// which the first non-blank content line sets.
		if n.Start != nil && n.Start.Position != nil && strings.HasPrefix(n.Start.Value, "|") && fe.Line >= 1 {
			lines := strings.Split(string(src), "\n")
			first := n.Start.Position.Line // 1-based line of "|"; content starts below
			indent := -1
			for i := first; i < len(lines); i++ {
				if t := strings.TrimLeft(lines[i], " "); t != "" {
					indent = len(lines[i]) - len(t)
					break
				}
			}
			if indent >= 0 && first+fe.Line <= len(lines) {
				p = pos{first + fe.Line, indent + 1 + fe.Column}
			}
		}
	}
	return p, msg
}
