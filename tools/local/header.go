package local

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Header limits. A script's header is untrusted text: only its first
// MaxHeaderBytes, and of those at most MaxHeaderLines lines, are read.
const (
	MaxHeaderBytes      = 16 << 10
	MaxHeaderLines      = 200
	MaxDescriptionBytes = 4 << 10
	MaxParamDescBytes   = 1 << 10
	maxParams           = 64

	continuationSentinel = -1
)

// Param is one @param line of a header.
type Param struct {
	Name        string
	Type        string // string, boolean, integer, number, array or object
	Required    bool   // the name was written with a leading '*'
	Description string
	Line        int // 1-based line of the @param tag
}

// Header is what a script's leading comment block declares.
type Header struct {
	Description string
	Line        int // 1-based line of the @description tag
	Params      []Param
	// Effects declared by @readonly, @destructive and @idempotent tags
	// (each alone on its line); they reach the policy as the tool's
	// effects. @readonly with @destructive is an error.
	ReadOnly, Destructive, Idempotent bool
	// EffectsLine is the line of the last effect tag; 0 if none.
	EffectsLine int
}

// HeaderError is a malformed header line.
type HeaderError struct {
	Line int // 1-based; 0 when the error is about the whole header
	Msg  string
}

func (e *HeaderError) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

var (
	paramNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`) })
	paramTypes  = map[string]bool{"string": true, "boolean": true, "integer": true, "number": true, "array": true, "object": true}
)

// ParseHeader parses the leading comment block of src: after an optional
// "#!" first line, the consecutive lines that are blank or start (after
// spaces) with "#", "//" or "--". In it:
//
//	@description text          the tool's description
//	@param [*]name type text   a parameter; '*' marks it required
//	@readonly                  the tool changes nothing
//	@destructive               the tool may destroy or overwrite data
//	@idempotent                calling it twice does what calling it once does
//
// A comment line without a tag continues the previous @description or
// @param; an empty comment line or another tag ends the continuation.
// Unknown tags are ignored. Only the first MaxHeaderBytes bytes and
// MaxHeaderLines lines are read; control and zero-width characters are
// stripped from descriptions, which are capped. A missing @description is
// an error (Line 0).
func ParseHeader(src []byte) (Header, error) {
	if len(src) > MaxHeaderBytes {
		src = src[:MaxHeaderBytes]
	}
	var h Header
	var desc strings.Builder
	seenDesc := false
	cont := 0 // 0: none, continuationSentinel: description, i>0: Params[i-1]
	seen := map[string]int{}
lines:
	for n := 1; len(src) > 0 && n <= MaxHeaderLines; n++ {
		var line []byte
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			line, src = src, nil
		}
		if n == 1 && bytes.HasPrefix(line, []byte("#!")) {
			continue
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 {
			cont = 0
			continue
		}
		var text []byte
		switch {
		case bytes.HasPrefix(t, []byte("//")), bytes.HasPrefix(t, []byte("--")):
			text = t[2:]
		case t[0] == '#':
			text = t[1:]
		default:
			break lines // the block ends at the first code line
		}
		text = bytes.TrimSpace(text)
		s := string(text)
		switch {
		case s == "":
			cont = 0
		case tagIs(s, "@description"):
			if seenDesc {
				return Header{}, &HeaderError{Line: n, Msg: "a second @description"}
			}
			seenDesc = true
			h.Line = n
			desc.WriteString(strings.TrimSpace(s[len("@description"):]))
			cont = continuationSentinel
		case tagIs(s, "@param"):
			p, err := parseParam(strings.TrimSpace(s[len("@param"):]), n)
			if err != nil {
				return Header{}, err
			}
			key := strings.ToUpper(p.Name)
			if prev, dup := seen[key]; dup {
				return Header{}, &HeaderError{Line: n, Msg: fmt.Sprintf("parameter %q repeats the one on line %d (names are compared ignoring case: they become environment variables)", p.Name, prev)}
			}
			if len(h.Params) == maxParams {
				return Header{}, &HeaderError{Line: n, Msg: fmt.Sprintf("more than %d parameters", maxParams)}
			}
			seen[key] = n
			h.Params = append(h.Params, p)
			cont = len(h.Params)
		case tagIs(s, "@readonly"), tagIs(s, "@read-only"):
			h.ReadOnly, h.EffectsLine, cont = true, n, 0
		case tagIs(s, "@destructive"):
			h.Destructive, h.EffectsLine, cont = true, n, 0
		case tagIs(s, "@idempotent"):
			h.Idempotent, h.EffectsLine, cont = true, n, 0
		case s[0] == '@':
			cont = 0 // an unknown tag
		case cont == continuationSentinel:
			appendText(&desc, s)
		case cont > 0:
			p := &h.Params[cont-1]
			p.Description = joinText(p.Description, s)
		}
	}
	h.Description = clean(desc.String(), MaxDescriptionBytes)
	if h.Description == "" {
		return Header{}, &HeaderError{Msg: "no @description in the leading comment block"}
	}
	for i := range h.Params {
		h.Params[i].Description = clean(h.Params[i].Description, MaxParamDescBytes)
	}
	if h.ReadOnly && h.Destructive {
		return Header{}, &HeaderError{Line: h.EffectsLine, Msg: "@readonly and @destructive contradict each other: keep one"}
	}
	return h, nil
}

// tagIs reports whether s starts with tag followed by a space or the end.
func tagIs(s, tag string) bool {
	return strings.HasPrefix(s, tag) && (len(s) == len(tag) || s[len(tag)] == ' ' || s[len(tag)] == '\t')
}

func parseParam(s string, line int) (Param, error) {
	fields := strings.Fields(s)
	if len(fields) < 2 {
		return Param{}, &HeaderError{Line: line, Msg: "want @param [*]name type description"}
	}
	p := Param{Name: fields[0], Type: fields[1], Line: line}
	if strings.HasPrefix(p.Name, "*") {
		p.Required, p.Name = true, p.Name[1:]
	}
	if !paramNameRE().MatchString(p.Name) {
		return Param{}, &HeaderError{Line: line, Msg: fmt.Sprintf("bad parameter name %q: want [A-Za-z_][A-Za-z0-9_]*, at most 64 characters", clean(p.Name, 64))}
	}
	if !paramTypes[p.Type] {
		return Param{}, &HeaderError{Line: line, Msg: fmt.Sprintf("parameter %s: unknown type %q: want string, boolean, integer, number, array or object", p.Name, clean(p.Type, 64))}
	}
	// The description is the rest after the type, with its own spacing.
	rest := s
	for _, f := range fields[:2] {
		rest = strings.TrimLeft(rest, " \t")
		rest = rest[len(f):]
	}
	p.Description = strings.TrimSpace(rest)
	return p, nil
}

func appendText(b *strings.Builder, s string) {
	if b.Len() > MaxDescriptionBytes {
		return
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(s)
}

func joinText(a, b string) string {
	if len(a) > MaxParamDescBytes {
		return a
	}
	if a == "" {
		return b
	}
	return a + " " + b
}

// clean makes untrusted text safe to show: valid UTF-8, without control
// or zero-width characters, at most max bytes.
func clean(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r == '\t' {
			return ' '
		}
		if unicode.IsControl(r) || invisible(r) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// invisible reports zero-width, bidirectional-control and other format
// characters that hide text from a reader.
func invisible(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, r >= 0x2028 && r <= 0x202E, r >= 0x2060 && r <= 0x206F,
		r == 0xFEFF, r == 0x00AD, r >= 0xFFF9 && r <= 0xFFFB:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}
