package openapi

import (
	"net/url"
	"strings"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v2 "github.com/pb33f/libopenapi/datamodel/high/v2"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	lowv2 "github.com/pb33f/libopenapi/datamodel/low/v2"
	"github.com/pb33f/libopenapi/orderedmap"
)

// operation is one operation of a spec, read from libopenapi's model
// (2.0 and 3.x alike): what a tool is made of.
type operation struct {
	method, path string // method in upper case
	id           string // operationId, may be empty
	summary      string
	description  string
	tags         []string
	deprecated   bool
	idempotent   *bool // x-idempotent, if set
	line         int   // of the operation's method key; 0 if unknown
	params       []*param
	body         *body
	result       *result
	consumes     []string // 2.0: the media types a body may take
}

// A parameter's locations.
const (
	inPath   = "path"
	inQuery  = "query"
	inHeader = "header"
	inCookie = "cookie"
)

type param struct {
	name, in    string
	required    bool
	description string
	deprecated  bool
	// schema is a JSON Schema node, or a 2.0 parameter's own mapping
	// (type, format, items, enum, ...) when v2; nil when untyped.
	schema *yaml.Node
	v2     bool
	style  string // 3.x style; 2.0's collectionFormat mapped to one
	// explode is 3.x's explode, defaulted by style.
	explode bool
	// asJSON: the value is sent as JSON text (a parameter with content).
	asJSON bool
	prop   string // the input schema's property for it
	line   int
}

type body struct {
	mediaType   string
	required    bool
	description string
	schema      *yaml.Node // nil when untyped
	fields      []*param   // 2.0 formData parameters (schema nil)
	line        int
}

type result struct {
	status    string
	mediaType string
	schema    *yaml.Node // nil when the answer is not described as JSON
}

var methods3 = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}

func pathOps3(pi *v3.PathItem) []*v3.Operation {
	return []*v3.Operation{pi.Get, pi.Put, pi.Post, pi.Delete, pi.Options, pi.Head, pi.Patch, pi.Trace}
}

// operations3 reads every operation of a 3.x document, in document order.
func operations3(doc *v3.Document) []*operation {
	var out []*operation
	if doc.Paths == nil || doc.Paths.PathItems == nil {
		return nil
	}
	for p, pi := range doc.Paths.PathItems.FromOldest() {
		if pi == nil {
			continue
		}
		for i, o := range pathOps3(pi) {
			if o == nil {
				continue
			}
			op := &operation{method: methods3[i], path: p, id: strings.TrimSpace(o.OperationId),
				summary: o.Summary, description: o.Description, tags: o.Tags,
				deprecated: o.Deprecated != nil && *o.Deprecated, idempotent: boolExt(o.Extensions, "x-idempotent")}
			for _, pr := range mergeParams(pi.Parameters, o.Parameters, key3) {
				if q := param3(pr); q != nil {
					op.params = append(op.params, q)
				}
			}
			if rb := o.RequestBody; rb != nil {
				op.body = body3(rb)
			}
			op.result = result3(o.Responses)
			out = append(out, op)
		}
	}
	return out
}

// mergeParams is the path item's parameters overridden by the
// operation's (same name and location).
func mergeParams[P any](item, op []*P, key func(*P) [2]string) []*P {
	if len(item) == 0 {
		return op
	}
	out := make([]*P, 0, len(item)+len(op))
	for _, p := range item {
		if p == nil {
			continue
		}
		overridden := false
		for _, q := range op {
			if q != nil && key(q) == key(p) {
				overridden = true
				break
			}
		}
		if !overridden {
			out = append(out, p)
		}
	}
	return append(out, op...)
}

func key3(p *v3.Parameter) [2]string { return [2]string{p.Name, p.In} }
func key2(p *v2.Parameter) [2]string { return [2]string{p.Name, p.In} }

func param3(p *v3.Parameter) *param {
	if p == nil || p.Name == "" {
		return nil
	}
	in := strings.ToLower(p.In)
	if in == inHeader && ignoredHeader(p.Name) {
		return nil
	}
	q := &param{name: p.Name, in: in, required: p.Required != nil && *p.Required || in == inPath,
		description: p.Description, deprecated: p.Deprecated, style: p.Style}
	if l := p.GoLow(); l != nil && l.KeyNode != nil {
		q.line = l.KeyNode.Line
	} else if l != nil && l.RootNode != nil {
		q.line = l.RootNode.Line
	}
	switch {
	case p.Schema != nil:
		q.schema = proxyNode(p.Schema)
	case p.Content != nil:
		for _, mt := range p.Content.FromOldest() {
			if mt != nil && mt.Schema != nil {
				q.schema = proxyNode(mt.Schema)
			}
			q.asJSON = true
			break
		}
	}
	if q.style == "" {
		switch in {
		case inQuery, inCookie:
			q.style = "form"
		default:
			q.style = "simple"
		}
	}
	q.explode = q.style == "form"
	if p.Explode != nil {
		q.explode = *p.Explode
	}
	return q
}

// ignoredHeader: OpenAPI says header parameters named Accept,
// Content-Type or Authorization are ignored (the request's content and
// the security schemes set them).
func ignoredHeader(name string) bool {
	switch strings.ToLower(name) {
	case "accept", "content-type", "authorization":
		return true
	}
	return false
}

// proxyNode is the node of a schema as the spec writes it: libopenapi
// resolves a schema that is a $ref, which is kept as a $ref here (so that
// the referenced schema is converted once, and shared).
func proxyNode(sp *base.SchemaProxy) *yaml.Node {
	if sp == nil {
		return nil
	}
	if sp.IsReference() {
		line := 0
		if l := sp.GoLow(); l != nil && l.GetKeyNode() != nil {
			line = l.GetKeyNode().Line
		}
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "$ref", Line: line},
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: sp.GetReference(), Line: line},
		}}
	}
	if l := sp.GoLow(); l != nil {
		return l.GetValueNode()
	}
	return nil
}

func body3(rb *v3.RequestBody) *body {
	b := &body{required: rb.Required != nil && *rb.Required, description: rb.Description}
	if l := rb.GoLow(); l != nil && l.KeyNode != nil {
		b.line = l.KeyNode.Line
	}
	mt, m := pickMedia(rb.Content, requestRank)
	b.mediaType = mt
	if m != nil {
		b.schema = proxyNode(m.Schema)
	}
	return b
}

// pickMedia returns the best-ranked media type of content (lowest rank;
// the first of equals), and its entry.
func pickMedia(content *orderedmap.Map[string, *v3.MediaType], rank func(string) int) (string, *v3.MediaType) {
	if content == nil {
		return "", nil
	}
	best, bestRank := "", 1<<30
	var bestM *v3.MediaType
	for k, m := range content.FromOldest() {
		if r := rank(k); r < bestRank {
			best, bestRank, bestM = k, r, m
		}
	}
	return best, bestM
}

// requestRank prefers JSON, then forms, then anything else.
func requestRank(mt string) int {
	switch {
	case isJSON(mt):
		return 0
	case mediaBase(mt) == formURLEncoded:
		return 1
	case mediaBase(mt) == multipartForm:
		return 2
	}
	return 3
}

// responseRank prefers JSON, then text.
func responseRank(mt string) int {
	switch {
	case isJSON(mt):
		return 0
	case isText(mt):
		return 1
	}
	return 2
}

const (
	formURLEncoded = "application/x-www-form-urlencoded"
	multipartForm  = "multipart/form-data"
)

// mediaBase is a media type without parameters, in lower case.
func mediaBase(mt string) string {
	mt, _, _ = strings.Cut(mt, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

func isJSON(mt string) bool {
	b := mediaBase(mt)
	return b == "application/json" || strings.HasSuffix(b, "+json")
}

func isText(mt string) bool {
	b := mediaBase(mt)
	return strings.HasPrefix(b, "text/") || b == "application/xml" || strings.HasSuffix(b, "+xml") ||
		b == "application/javascript" || b == "application/yaml" || b == "application/x-yaml" ||
		b == "application/x-ndjson" || b == "application/jsonl"
}

// successCode picks the success answer an output schema describes: 200,
// then the other 2xx codes in order, then 2XX.
func successCode[R any](codes *orderedmap.Map[string, R]) (string, R, bool) {
	var zero R
	if codes == nil {
		return "", zero, false
	}
	if r, ok := codes.Get("200"); ok {
		return "200", r, true
	}
	for k, r := range codes.FromOldest() {
		if len(k) == 3 && k[0] == '2' && k[1] >= '0' && k[1] <= '9' {
			return k, r, true
		}
	}
	for k, r := range codes.FromOldest() {
		if strings.EqualFold(k, "2XX") {
			return k, r, true
		}
	}
	return "", zero, false
}

func result3(rs *v3.Responses) *result {
	if rs == nil {
		return nil
	}
	code, r, ok := successCode(rs.Codes)
	if !ok || r == nil {
		return nil
	}
	res := &result{status: code}
	mt, m := pickMedia(r.Content, responseRank)
	res.mediaType = mt
	if m != nil && isJSON(mt) {
		res.schema = proxyNode(m.Schema)
	}
	return res
}

func boolExt(ext *orderedmap.Map[string, *yaml.Node], key string) *bool {
	if ext == nil {
		return nil
	}
	n, ok := ext.Get(key)
	if !ok || n == nil || n.Kind != yaml.ScalarNode {
		return nil
	}
	var v bool
	switch strings.ToLower(n.Value) {
	case "true":
		v = true
	case "false":
	default:
		return nil
	}
	return &v
}

// baseURL3 is the first server's URL with its variables' defaults, or
// "" when the spec has none.
func baseURL3(doc *v3.Document) string {
	if len(doc.Servers) == 0 || doc.Servers[0] == nil {
		return ""
	}
	s := doc.Servers[0]
	u := s.URL
	if s.Variables != nil {
		for k, v := range s.Variables.FromOldest() {
			if v != nil {
				u = strings.ReplaceAll(u, "{"+k+"}", v.Default)
			}
		}
	}
	return u
}

// operations2 reads every operation of a Swagger 2.0 document.
func operations2(doc *v2.Swagger) []*operation {
	var out []*operation
	if doc.Paths == nil || doc.Paths.PathItems == nil {
		return nil
	}
	for p, pi := range doc.Paths.PathItems.FromOldest() {
		if pi == nil {
			continue
		}
		ops := []*v2.Operation{pi.Get, pi.Put, pi.Post, pi.Delete, pi.Options, pi.Head, pi.Patch}
		for i, o := range ops {
			if o == nil {
				continue
			}
			op := &operation{method: methods3[i], path: p, id: strings.TrimSpace(o.OperationId),
				summary: o.Summary, description: o.Description, tags: o.Tags, deprecated: o.Deprecated,
				idempotent: boolExt(o.Extensions, "x-idempotent"), consumes: o.Consumes}
			if len(op.consumes) == 0 {
				op.consumes = doc.Consumes
			}
			var form []*param
			for _, pr := range mergeParams(pi.Parameters, o.Parameters, key2) {
				switch strings.ToLower(pr.In) {
				case "body":
					op.body = &body{mediaType: "application/json", required: pr.Required != nil && *pr.Required,
						description: pr.Description, schema: proxyNode(pr.Schema)}
					if l := pr.GoLow(); l != nil && l.Name.KeyNode != nil {
						op.body.line = l.Name.KeyNode.Line
					}
				case "formdata":
					if q := param2(pr); q != nil {
						form = append(form, q)
					}
				default:
					if q := param2(pr); q != nil {
						op.params = append(op.params, q)
					}
				}
			}
			if len(form) > 0 && op.body == nil {
				mt := formURLEncoded
				for _, c := range op.consumes {
					if mediaBase(c) == multipartForm {
						mt = multipartForm
					}
				}
				op.body = &body{mediaType: mt, fields: form}
				for _, f := range form {
					op.body.required = op.body.required || f.required
				}
			}
			op.result = result2(o.Responses, o.Produces, doc.Produces)
			out = append(out, op)
		}
	}
	return out
}

// param2 reads a 2.0 parameter that is not a body: its schema is the
// parameter's own type, format, items, enum and bounds.
func param2(p *v2.Parameter) *param {
	if p == nil || p.Name == "" {
		return nil
	}
	in := strings.ToLower(p.In)
	if in == "formdata" {
		in = "formData"
	}
	if in == inHeader && ignoredHeader(p.Name) {
		return nil
	}
	q := &param{name: p.Name, in: in, required: p.Required != nil && *p.Required || in == inPath,
		description: p.Description, v2: true}
	l := p.GoLow()
	if l != nil && l.Name.KeyNode != nil {
		q.line = l.Name.KeyNode.Line
	}
	if l != nil {
		q.schema = v2ParamSchema(l)
	}
	switch p.CollectionFormat {
	case "multi":
		q.style, q.explode = "form", true
	case "ssv":
		q.style = "spaceDelimited"
	case "pipes":
		q.style = "pipeDelimited"
	case "tsv":
		q.style = "tabDelimited"
	default: // csv
		q.style = "form"
		if in == inPath || in == inHeader {
			q.style = "simple"
		}
	}
	return q
}

// v2ParamSchema makes a mapping node of a 2.0 parameter's schema
// keywords, from the nodes the low-level model kept.
func v2ParamSchema(l *lowv2.Parameter) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	add := func(key string, kn, vn *yaml.Node) {
		if vn == nil {
			return
		}
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
		if kn != nil {
			k.Line = kn.Line
		}
		m.Content = append(m.Content, k, vn)
	}
	add("type", l.Type.KeyNode, l.Type.ValueNode)
	add("format", l.Format.KeyNode, l.Format.ValueNode)
	add("items", l.Items.KeyNode, l.Items.ValueNode)
	add("default", l.Default.KeyNode, l.Default.ValueNode)
	add("maximum", l.Maximum.KeyNode, l.Maximum.ValueNode)
	add("exclusiveMaximum", l.ExclusiveMaximum.KeyNode, l.ExclusiveMaximum.ValueNode)
	add("minimum", l.Minimum.KeyNode, l.Minimum.ValueNode)
	add("exclusiveMinimum", l.ExclusiveMinimum.KeyNode, l.ExclusiveMinimum.ValueNode)
	add("maxLength", l.MaxLength.KeyNode, l.MaxLength.ValueNode)
	add("minLength", l.MinLength.KeyNode, l.MinLength.ValueNode)
	add("pattern", l.Pattern.KeyNode, l.Pattern.ValueNode)
	add("maxItems", l.MaxItems.KeyNode, l.MaxItems.ValueNode)
	add("minItems", l.MinItems.KeyNode, l.MinItems.ValueNode)
	add("uniqueItems", l.UniqueItems.KeyNode, l.UniqueItems.ValueNode)
	add("multipleOf", l.MultipleOf.KeyNode, l.MultipleOf.ValueNode)
	add("enum", l.Enum.KeyNode, l.Enum.ValueNode)
	if len(m.Content) == 0 {
		return nil
	}
	return m
}

func result2(rs *v2.Responses, produces, global []string) *result {
	if rs == nil {
		return nil
	}
	code, r, ok := successCode(rs.Codes)
	if !ok || r == nil {
		return nil
	}
	if len(produces) == 0 {
		produces = global
	}
	res := &result{status: code, mediaType: "application/json"}
	if len(produces) > 0 {
		best := 1 << 30
		for _, p := range produces {
			if rk := responseRank(p); rk < best {
				best, res.mediaType = rk, p
			}
		}
	}
	if isJSON(res.mediaType) {
		res.schema = proxyNode(r.Schema)
	}
	return res
}

// baseURL2 is schemes[0]://host basePath, or "" without a host.
func baseURL2(doc *v2.Swagger) string {
	if doc.Host == "" {
		return ""
	}
	scheme := "https"
	if len(doc.Schemes) > 0 {
		scheme = strings.ToLower(doc.Schemes[0])
		for _, s := range doc.Schemes {
			if strings.EqualFold(s, "https") {
				scheme = "https"
			}
		}
	}
	u := url.URL{Scheme: scheme, Host: doc.Host, Path: doc.BasePath}
	return u.String()
}
