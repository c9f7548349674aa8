package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Stage 1, compile: an input schema becomes a tree of nodes, once, when
// the tool is added (Catalog.Add, Func). See validate.go for the subset.

func compileValidator(s *jsonschema.Schema) (*validator, error) {
	if s == nil {
		return &validator{root: &node{types: tObject, closed: true, minLen: -1, maxLen: -1, maxProps: -1, maxItems: -1}}, nil
	}
	if kw := BeyondSubset(s); kw != "" {
		return compileFull(s, kw)
	}
	c := &compiler{root: s, done: map[*jsonschema.Schema]*node{}, busy: map[*jsonschema.Schema]bool{}}
	n, err := c.compile(s, "#")
	if errors.Is(err, errBeyondSubset) {
		return compileFull(s, err.Error())
	}
	if err != nil {
		return nil, err
	}
	return &validator{root: n}, nil
}

type compiler struct {
	root *jsonschema.Schema
	done map[*jsonschema.Schema]*node
	busy map[*jsonschema.Schema]bool // pure $ref schemas being followed
}

// pureRef reports whether s is only a $ref (plus annotations).
func pureRef(s *jsonschema.Schema) bool {
	if s.Ref == "" {
		return false
	}
	c := *s
	c.Ref, c.Schema, c.ID, c.Comment, c.Title, c.Description = "", "", "", "", "", ""
	c.Defs, c.Definitions, c.Default, c.Examples, c.Deprecated = nil, nil, nil, nil, false
	c.ReadOnly, c.WriteOnly, c.PropertyOrder, c.Format, c.Extra = false, false, nil, "", nil
	return reflect.ValueOf(c).IsZero()
}

func (c *compiler) compile(s *jsonschema.Schema, at string) (*node, error) {
	if s == nil {
		return nil, nil
	}
	if n, ok := c.done[s]; ok {
		return n, nil
	}
	if pureRef(s) {
		if c.busy[s] {
			return nil, fmt.Errorf("%s: circular $ref %q", at, s.Ref)
		}
		c.busy[s] = true
		target, err := c.deref(s.Ref, at)
		if err != nil {
			return nil, err
		}
		n, err := c.compile(target, s.Ref)
		delete(c.busy, s)
		if err != nil {
			return nil, err
		}
		if n == nil {
			n = &node{minLen: -1, maxLen: -1, maxProps: -1, maxItems: -1}
		}
		c.done[s] = n
		return n, nil
	}
	n := &node{minLen: -1, maxLen: -1, maxProps: -1, maxItems: -1}
	c.done[s] = n
	var err error

	if s.Not != nil && IsTrueSchema(s.Not) {
		n.never = true // {"not": {}} is the false schema
	} else if s.Not != nil {
		if n.not, err = c.compile(s.Not, at+"/not"); err != nil {
			return nil, err
		}
		if n.not == nil {
			n.never = true
		}
	}
	if s.Type != "" && s.Types != nil {
		return nil, fmt.Errorf("%s: both type and types are set", at)
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	for _, name := range types {
		switch name {
		case "null":
			n.types |= tNull
		case "boolean":
			n.types |= tBool
		case "object":
			n.types |= tObject
		case "array":
			n.types |= tArray
		case "number":
			n.types |= tNumber | tInteger
		case "integer":
			n.types |= tInteger
		case "string":
			n.types |= tString
		default:
			return nil, fmt.Errorf("%s: unknown type %q", at, name)
		}
	}
	if s.Types != nil && len(s.Types) == 0 {
		n.never = true
	}

	if s.Enum != nil {
		n.hasEnum = true
		n.enum = s.Enum
		allStr := true
		for _, v := range s.Enum {
			str, ok := v.(string)
			if !ok {
				allStr = false
				break
			}
			n.enumStr = append(n.enumStr, str)
		}
		if !allStr {
			n.enumStr = nil
			for _, v := range s.Enum {
				cv, err := canonical(v)
				if err != nil {
					return nil, fmt.Errorf("%s: enum: %v", at, err)
				}
				n.enumJSON = append(n.enumJSON, cv)
			}
		}
	}
	if s.Const != nil {
		n.hasConst = true
		n.constRaw = *s.Const
		if n.constVal, err = canonical(*s.Const); err != nil {
			return nil, fmt.Errorf("%s: const: %v", at, err)
		}
	}
	if s.Minimum != nil {
		n.hasMin, n.min = true, *s.Minimum
	}
	if s.Maximum != nil {
		n.hasMax, n.max = true, *s.Maximum
	}
	if s.ExclusiveMinimum != nil {
		n.hasExMin, n.exMin = true, *s.ExclusiveMinimum
	}
	if s.ExclusiveMaximum != nil {
		n.hasExMax, n.exMax = true, *s.ExclusiveMaximum
	}
	if s.MultipleOf != nil {
		if !(*s.MultipleOf > 0) {
			return nil, fmt.Errorf("%s: multipleOf must be positive", at)
		}
		n.multipleOf = *s.MultipleOf
	}
	if s.MinLength != nil {
		n.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		n.maxLen = *s.MaxLength
	}
	if s.Pattern != "" {
		if n.pattern, err = regexp.Compile(s.Pattern); err != nil {
			return nil, fmt.Errorf("%s: pattern %q: %v", at, s.Pattern, err)
		}
	}

	// Objects: properties in schema order (PropertyOrder first, then the
	// rest sorted), so that the first error is deterministic.
	if len(s.Properties) > 0 {
		names := make([]string, 0, len(s.Properties))
		for _, name := range s.PropertyOrder {
			if _, ok := s.Properties[name]; ok && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		var rest []string
		for name := range s.Properties {
			if !slices.Contains(names, name) {
				rest = append(rest, name)
			}
		}
		slices.Sort(rest)
		names = append(names, rest...)
		for _, name := range names {
			pn, err := c.compile(s.Properties[name], at+"/properties/"+name)
			if err != nil {
				return nil, err
			}
			n.props = append(n.props, prop{name: name, node: pn, required: slices.Contains(s.Required, name), declared: true})
		}
	}
	for _, name := range s.Required {
		if !slices.ContainsFunc(n.props, func(p prop) bool { return p.name == name }) {
			n.props = append(n.props, prop{name: name, required: true})
		}
	}
	if len(n.props) > 8 {
		n.propIndex = make(map[string]int, len(n.props))
		for i, p := range n.props {
			n.propIndex[p.name] = i
		}
	}
	if ap := s.AdditionalProperties; ap != nil {
		if IsFalseSchema(ap) {
			n.closed = true
		} else if !IsTrueSchema(ap) {
			if n.additional, err = c.compile(ap, at+"/additionalProperties"); err != nil {
				return nil, err
			}
		}
	}
	if len(s.PatternProperties) > 0 {
		keys := make([]string, 0, len(s.PatternProperties))
		for k := range s.PatternProperties {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			re, err := regexp.Compile(k)
			if err != nil {
				return nil, fmt.Errorf("%s: patternProperties %q: %v", at, k, err)
			}
			pn, err := c.compile(s.PatternProperties[k], at+"/patternProperties/"+k)
			if err != nil {
				return nil, err
			}
			n.patProps = append(n.patProps, patProp{re: re, node: pn})
		}
	}
	if s.MinProperties != nil {
		n.minProps = *s.MinProperties
	}
	if s.MaxProperties != nil {
		n.maxProps = *s.MaxProperties
	}

	// Arrays.
	prefix, rest := s.PrefixItems, s.Items
	if s.ItemsArray != nil {
		prefix, rest = s.ItemsArray, s.AdditionalItems
	}
	for i, ps := range prefix {
		pn, err := c.compile(ps, at+"/prefixItems/"+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		if pn == nil {
			pn = &node{minLen: -1, maxLen: -1, maxProps: -1, maxItems: -1}
		}
		n.prefix = append(n.prefix, pn)
	}
	if n.items, err = c.compile(rest, at+"/items"); err != nil {
		return nil, err
	}
	if s.MinItems != nil {
		n.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		n.maxItems = *s.MaxItems
	}

	list := func(ss []*jsonschema.Schema, kw string) ([]*node, error) {
		var out []*node
		for i, x := range ss {
			xn, err := c.compile(x, at+"/"+kw+"/"+strconv.Itoa(i))
			if err != nil {
				return nil, err
			}
			if xn == nil {
				xn = &node{minLen: -1, maxLen: -1, maxProps: -1, maxItems: -1}
			}
			out = append(out, xn)
		}
		return out, nil
	}
	if n.allOf, err = list(s.AllOf, "allOf"); err != nil {
		return nil, err
	}
	if n.anyOf, err = list(s.AnyOf, "anyOf"); err != nil {
		return nil, err
	}
	if n.oneOf, err = list(s.OneOf, "oneOf"); err != nil {
		return nil, err
	}
	if s.Ref != "" {
		target, err := c.deref(s.Ref, at)
		if err != nil {
			return nil, err
		}
		if n.ref, err = c.compile(target, s.Ref); err != nil {
			return nil, err
		}
	}
	n.applies = n.hasEnum || n.hasConst || n.ref != nil || len(n.allOf) > 0 || len(n.anyOf) > 0 || len(n.oneOf) > 0 || n.not != nil
	n.numChecks = n.hasMin || n.hasMax || n.hasExMin || n.hasExMax || n.multipleOf > 0 || n.hasEnum || n.hasConst
	n.strChecks = n.hasEnum || n.hasConst || n.minLen >= 0 || n.maxLen >= 0 || n.pattern != nil
	return n, nil
}

// deref resolves a local $ref against the root schema.
func (c *compiler) deref(ref, at string) (*jsonschema.Schema, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("%s: $ref %q: only local references (#/...) are supported", at, ref)
	}
	frag := ref[1:]
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	if frag == "" {
		return c.root, nil
	}
	if frag[0] != '/' {
		return nil, fmt.Errorf("%s: $ref %q: an anchor: %w", at, ref, errBeyondSubset)
	}
	cur := c.root
	segs := strings.Split(frag[1:], "/")
	for i := 0; i < len(segs); i++ {
		seg := strings.ReplaceAll(strings.ReplaceAll(segs[i], "~1", "/"), "~0", "~")
		next := func() (string, bool) {
			if i+1 >= len(segs) {
				return "", false
			}
			i++
			return strings.ReplaceAll(strings.ReplaceAll(segs[i], "~1", "/"), "~0", "~"), true
		}
		var nx *jsonschema.Schema
		switch seg {
		case "$defs", "definitions", "properties", "patternProperties", "dependentSchemas":
			key, ok := next()
			if ok {
				m := map[string]map[string]*jsonschema.Schema{
					"$defs": cur.Defs, "definitions": cur.Definitions, "properties": cur.Properties,
					"patternProperties": cur.PatternProperties, "dependentSchemas": cur.DependentSchemas,
				}[seg]
				nx = m[key]
			}
		case "items":
			nx = cur.Items
			if nx == nil && cur.ItemsArray != nil {
				if k, ok := next(); ok {
					if j, err := strconv.Atoi(k); err == nil && j >= 0 && j < len(cur.ItemsArray) {
						nx = cur.ItemsArray[j]
					}
				}
			}
		case "additionalProperties":
			nx = cur.AdditionalProperties
		case "additionalItems":
			nx = cur.AdditionalItems
		case "not":
			nx = cur.Not
		case "prefixItems", "allOf", "anyOf", "oneOf":
			k, ok := next()
			j, err := strconv.Atoi(k)
			if ok && err == nil && j >= 0 {
				l := map[string][]*jsonschema.Schema{"prefixItems": cur.PrefixItems, "allOf": cur.AllOf, "anyOf": cur.AnyOf, "oneOf": cur.OneOf}[seg]
				if j < len(l) {
					nx = l[j]
				}
			}
		}
		if nx == nil {
			return nil, fmt.Errorf("%s: $ref %q does not resolve", at, ref)
		}
		cur = nx
	}
	return cur, nil
}

// canonical returns v as encoding/json would decode its JSON encoding, so
// that schema values and argument values compare alike.
func canonical(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}
