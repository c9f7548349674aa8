package openapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/pb33f/go-yaml"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/lint"
	"github.com/sandcall/sandcall/tools/upstream"
)

// MaxDescriptionBytes caps a tool's description: the operation's summary,
// the first paragraphs of its description that fit, and its method and
// path.
const MaxDescriptionBytes = 800

// BodyProperty is the input property that holds the request body.
const BodyProperty = "body"

// plan is how a tool's call becomes a request.
type plan struct {
	tool       string
	method     string
	path       string // the spec's path template
	params     []*param
	body       *body
	bodyProp   bool
	result     *result
	idempotent bool
}

// builder makes the tools of one source.
type builder struct {
	cfg   *Config
	conv  *converter
	file  string
	names map[string]bool
	plans map[*tools.Tool]*plan
	found []lint.Finding
	// lastName is the name of the tool being built.
	lastName string
}

// Finding is what lint found in a spec (package lint's rules
// openapi-*), at the spec's file:line.
type Finding = lint.Finding

func newBuilder(cfg *Config, conv *converter, file string) *builder {
	return &builder{cfg: cfg, conv: conv, file: file, names: map[string]bool{}, plans: map[*tools.Tool]*plan{}}
}

func (b *builder) pos(line int) string {
	if line <= 0 {
		return b.file
	}
	return b.file + ":" + strconv.Itoa(line)
}

func (b *builder) finding(tool, rule string, line int, format string, args ...any) {
	b.found = append(b.found, lint.NewFinding(tool, rule, b.pos(line), fmt.Sprintf(format, args...)))
}

// tool makes op into a tool (its Handler is set by Load).
func (b *builder) tool(op *operation) (*tools.Tool, error) {
	name := b.name(op)
	b.lastName = name
	if op.id == "" {
		b.finding(name, "openapi-operation-id", op.line, "%s %s has no operationId: the tool is named %s after its method and path", op.method, op.path, name)
	}
	if strings.TrimSpace(op.summary) == "" && strings.TrimSpace(op.description) == "" {
		b.finding(name, "openapi-description", op.line, "%s %s has neither a summary nor a description", op.method, op.path)
	}
	p := &plan{tool: name, method: op.method, path: op.path, params: op.params, body: op.body, result: op.result}
	in := b.inputSchema(op, p)
	t := &tools.Tool{
		Name:        name,
		Title:       upstream.CleanText(oneLine(op.summary), 200),
		Description: description(op),
		InputSchema: in,
		Effects:     effects(op),
		Source:      b.cfg.Name,
		SourceName:  upstream.CleanText(op.id, 200),
		Pos:         b.pos(op.line),
	}
	p.idempotent = t.Effects.Idempotent
	if op.result != nil {
		switch {
		case op.result.schema != nil:
			var refs []string
			t.OutputSchema = b.conv.withDefs(b.conv.convert(op.result.schema, &refs), refs)
		case op.result.mediaType != "" && !isJSON(op.result.mediaType):
			t.OutputSchema = contentSchema()
		}
	}
	b.plans[t] = p
	return t, nil
}

// name is the tool's name: <source>_<operationId in snake case>, or
// <source>_<method>_<path words> without an operationId; at most 64
// characters (a longer one is cut and ends with a hash of the whole), and
// unique within the source (a clash gets the hash of method and path).
func (b *builder) name(op *operation) string {
	stem := snake(op.id)
	if stem == "" {
		stem = snake(strings.ToLower(op.method) + " " + strings.NewReplacer("{", "", "}", "").Replace(op.path))
	}
	if rest, ok := strings.CutPrefix(stem, b.cfg.Name+"_"); ok && rest != "" {
		stem = rest
	}
	if stem == "" || stem[0] >= '0' && stem[0] <= '9' {
		stem = "op_" + stem
	}
	name := fit(b.cfg.Name+"_"+stem, op.method+" "+op.path)
	for i := 2; b.names[name]; i++ {
		name = fit(b.cfg.Name+"_"+stem+"_"+shortHash(op.method+" "+op.path+strconv.Itoa(i)), op.method+" "+op.path)
	}
	b.names[name] = true
	return name
}

// fit cuts name to 64 characters, ending a cut one with a hash of name and
// key.
func fit(name, key string) string {
	const max = 64
	if len(name) <= max {
		return strings.TrimRight(name, "_")
	}
	h := shortHash(name + "\x00" + key)
	return strings.TrimRight(name[:max-len(h)-1], "_") + "_" + h
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:3])
}

// snake writes s in snake case: words split at non-alphanumerics and at
// camelCase humps ("listPets" → list_pets, "getHTTPStatus" →
// get_http_status, "issues/create" → issues_create).
func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	under := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
	}
	for i, r := range rs {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			prevLower := i > 0 && (rs[i-1] >= 'a' && rs[i-1] <= 'z' || rs[i-1] >= '0' && rs[i-1] <= '9')
			nextLower := i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z'
			prevUpper := i > 0 && rs[i-1] >= 'A' && rs[i-1] <= 'Z'
			if prevLower || prevUpper && nextLower {
				under()
			}
			b.WriteRune(r + ('a' - 'A'))
		default:
			under()
		}
	}
	return strings.Trim(b.String(), "_")
}

// effects follow the method: GET, HEAD, OPTIONS and TRACE read and may be
// repeated; DELETE destroys and may be repeated; PUT may be repeated;
// POST and PATCH may not, unless the operation says x-idempotent: true
// (x-idempotent: false makes any method not idempotent). Every call
// reaches an outside service: open world.
func effects(op *operation) tools.Effects {
	e := tools.Effects{OpenWorld: true, Declared: true}
	switch op.method {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		e.ReadOnly, e.Idempotent = true, true
	case "DELETE":
		e.Destructive, e.Idempotent = true, true
	case "PUT":
		e.Idempotent = true
	}
	if op.idempotent != nil {
		e.Idempotent = *op.idempotent
	}
	return e
}

var (
	mdLink  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`!?\[([^\]]*)\]\([^)\s]*\)`) })
	htmlTag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`</?[a-zA-Z][^<>]{0,200}>`) })
)

// cleanProse cleans spec text for a model: markdown links become their
// text, HTML tags go, control and invisible characters go.
func cleanProse(s string, max int) string {
	if strings.Contains(s, "](") {
		s = mdLink().ReplaceAllString(s, "$1")
	}
	if strings.Contains(s, "<") {
		s = htmlTag().ReplaceAllString(s, "")
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimSpace(upstream.CleanText(s, max))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// description is the summary, then as many whole paragraphs of the
// description as fit in MaxDescriptionBytes, then the method and path.
func description(op *operation) string {
	tail := fmt.Sprintf("(%s %s)", op.method, clip(op.path, 200))
	if op.deprecated {
		tail = "Deprecated. " + tail
	}
	room := MaxDescriptionBytes - len(tail) - 2
	var parts []string
	summary := cleanProse(oneLine(op.summary), 300)
	if summary != "" {
		if !strings.HasSuffix(summary, ".") && !strings.HasSuffix(summary, "?") && !strings.HasSuffix(summary, "!") {
			summary += "."
		}
		parts = append(parts, summary)
		room -= len(summary) + 2
	}
	desc := cleanProse(op.description, 4*MaxDescriptionBytes)
	if strings.HasPrefix(desc, strings.TrimSuffix(summary, ".")) && summary != "" {
		desc = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(desc, strings.TrimSuffix(summary, ".")), "."))
	}
	for _, para := range strings.Split(desc, "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		if len(para)+2 > room {
			if len(parts) == 0 && room > 40 { // a first paragraph too long: its first sentences
				para = clip(para, room-2)
				parts = append(parts, para)
			}
			break
		}
		parts = append(parts, para)
		room -= len(para) + 2
	}
	parts = append(parts, tail)
	return strings.Join(parts, "\n\n")
}

// inputSchema is the closed object of the call's arguments: one property
// per path, query, header and cookie parameter (named as the parameter;
// one whose name is taken by another parameter or by "body" is named
// <in>_<name>), and "body" for the request body.
func (b *builder) inputSchema(op *operation, p *plan) *jsonschema.Schema {
	taken := map[string]int{}
	for _, q := range op.params {
		taken[q.name]++
	}
	var refs []string
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: falseSchema()}
	used := map[string]bool{}
	for _, q := range op.params {
		q.prop = q.name
		if taken[q.name] > 1 || q.name == BodyProperty && op.body != nil || used[q.prop] {
			q.prop = q.in + "_" + q.name
		}
		for i := 2; used[q.prop]; i++ {
			q.prop = q.in + "_" + q.name + "_" + strconv.Itoa(i)
		}
		used[q.prop] = true
		s.Properties[q.prop] = b.paramSchema(q, &refs)
		s.PropertyOrder = append(s.PropertyOrder, q.prop)
		if q.required {
			s.Required = append(s.Required, q.prop)
		}
	}
	if op.body != nil {
		p.bodyProp = true
		s.Properties[BodyProperty] = b.bodySchema(op, &refs)
		s.PropertyOrder = append(s.PropertyOrder, BodyProperty)
		if op.body.required {
			s.Required = append(s.Required, BodyProperty)
		}
	}
	return b.conv.withDefs(s, refs)
}

// paramSchema is a parameter's schema, with its description.
func (b *builder) paramSchema(q *param, refs *[]string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string"}
	if q.schema != nil {
		s = b.conv.convert(q.schema, refs)
	}
	if d := cleanProse(q.description, 500); d != "" && s.Description == "" {
		s.Description = d
	}
	if q.deprecated {
		s.Deprecated = true
	}
	return s
}

// bodySchema is the request body's schema: the media type's schema (JSON,
// or a form's object), 2.0's form fields as an object, or a string for
// any other media type (sent as is).
func (b *builder) bodySchema(op *operation, refs *[]string) *jsonschema.Schema {
	bd := op.body
	var s *jsonschema.Schema
	switch {
	case len(bd.fields) > 0:
		s = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: falseSchema()}
		for _, f := range bd.fields {
			f.prop = f.name
			s.Properties[f.name] = b.paramSchema(f, refs)
			s.PropertyOrder = append(s.PropertyOrder, f.name)
			if f.required {
				s.Required = append(s.Required, f.name)
			}
		}
	case bd.schema != nil && (isJSON(bd.mediaType) || isForm(bd.mediaType)):
		s = b.conv.convert(bd.schema, refs)
		if untyped(bd.schema) {
			b.finding(b.lastName, "openapi-body-type", bd.line, "%s %s: the request body's schema has no type", op.method, op.path)
		}
	case isJSON(bd.mediaType) || isForm(bd.mediaType) || bd.mediaType == "":
		s = &jsonschema.Schema{}
		b.finding(b.lastName, "openapi-body-type", bd.line, "%s %s: the request body has no schema", op.method, op.path)
	default:
		s = &jsonschema.Schema{Type: "string"}
	}
	d := cleanProse(bd.description, 500)
	if d == "" && bd.mediaType != "" && !isJSON(bd.mediaType) {
		d = "The request body, sent as " + clip(bd.mediaType, 80) + "."
	}
	if d != "" && s.Description == "" {
		s.Description = d
	}
	return s
}

func isForm(mt string) bool {
	m := mediaBase(mt)
	return m == formURLEncoded || m == multipartForm
}

// untyped reports whether a body schema says nothing of its shape.
func untyped(n *yaml.Node) bool {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return true
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case "type", "$ref", "properties", "allOf", "anyOf", "oneOf", "items", "enum", "const":
			return false
		}
	}
	return true
}

// contentSchema describes what a call returns for an answer that is not
// JSON.
func contentSchema() *jsonschema.Schema {
	text := any("text")
	return &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"type":     {Type: "string", Const: &text},
			"mimeType": {Type: "string", Description: "The answer's media type."},
			"text":     {Type: "string", Description: "The answer's text; for binary content, a note of its size, not the bytes."},
		},
		PropertyOrder: []string{"type", "mimeType", "text"},
		Required:      []string{"type", "text"}}
}

// findings is what lint found: the builder's, then the converter's.
func (b *builder) findings(c *converter) []Finding {
	out := b.found
	seen := map[note]bool{}
	for _, n := range c.notes {
		if !seen[n] {
			seen[n] = true
			out = append(out, lint.NewFinding(b.cfg.Name, n.rule, b.pos(n.line), n.msg))
		}
	}
	return out
}
