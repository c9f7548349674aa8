package js

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/sandcall/sandcall/sandbox"
)

// maxBuildDepth bounds the nesting of JSON coming from the host.
const maxBuildDepth = 512

// maxDocBytes bounds one JSON document from the host (node offsets are
// 32-bit).
const maxDocBytes = math.MaxInt32 - 1

// Kinds of jnode.
const (
	kNull uint8 = iota
	kFalse
	kTrue
	kNumber
	kString
	kObject
	kArray
)

// Flags of jnode.
const (
	// fCanon: the node's bytes are exactly what JSON.stringify gives for
	// the value they parse to (compact, canonical numbers and strings,
	// unique keys in the order goja enumerates them), so the converter may
	// copy them.
	fCanon uint8 = 1 << iota
	// fEsc: a string with escapes or invalid UTF-8 (its content is not a
	// substring).
	fEsc
	// fPlainKeys: an object whose keys are unique, without escapes and not
	// array indices, so that their enumeration order is the text's.
	fPlainKeys
)

// jnode is one value of a parsed JSON document. Nodes are stored in
// pre-order; a container's children (for objects: key and value nodes,
// alternating) are listed in lazyDoc.kids.
type jnode struct {
	start, end int32 // the value's bytes in lazyDoc.s (strings with quotes)
	kid        int32 // containers: index of the first child in lazyDoc.kids
	n          int32 // containers: number of elements or properties
	last       int32 // containers: index after the subtree's last node
	kind       uint8
	flags      uint8
	height     uint16 // containers: nesting height (1 for a flat container)
}

// buildValue parses compact JSON from the host into a guest value. The
// bytes are validated and indexed once, on the Go side (one string
// conversion, a flat node slice); objects and arrays reach the guest as
// lazy wrappers (see lazy.go) that create their members on first access.
// Each call builds its own document, so two results never share wrappers.
func (r *run) buildValue(data []byte) (goja.Value, *sandbox.Error) {
	if v, ok := r.scalarValue(data); ok {
		return v, nil
	}
	d, err := r.parseDoc(data)
	if err != nil {
		return nil, err
	}
	d.r = r
	return d.value(0, nil), nil
}

// scalarValue converts a result that is a lone number or literal (the
// common answer of small tools) without building a document.
func (r *run) scalarValue(data []byte) (goja.Value, bool) {
	if len(data) == 0 || len(data) > 24 {
		return nil, false
	}
	c := data[0]
	if !(c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
		return nil, false
	}
	var buf [1]jnode
	p := jparser{s: string(data), nodes: buf[:0]}
	n := p.value(0)
	if p.err != "" || n != 0 || p.i != len(p.s) {
		return nil, false // the full parser reports the error
	}
	switch nd := p.nodes[0]; nd.kind {
	case kNull:
		return goja.Null(), true
	case kTrue:
		return r.g.trueV, true
	case kFalse:
		return r.g.falseV, true
	default:
		return numberValue(r.rt, p.s[nd.start:nd.end]), true
	}
}

// parseDoc validates and indexes data. r (which may be nil) lends its
// scratch stack.
func (r *run) parseDoc(data []byte) (*lazyDoc, *sandbox.Error) {
	if len(data) > maxDocBytes {
		return nil, sandbox.Errorf(sandbox.EToolFailed, "", "the tool returned a JSON document over 2 GiB")
	}
	p := jparser{s: string(data)}
	// A rough estimate of the node count saves most regrowth.
	est := 8 + len(data)/12
	p.nodes = make([]jnode, 0, est)
	p.kids = make([]int32, 0, est)
	if r != nil {
		p.stack = r.parseStack[:0]
		defer func() { r.parseStack = p.stack[:0] }()
	}
	p.ws()
	p.value(0)
	if p.err == "" {
		p.ws()
		if p.i != len(p.s) {
			p.fail("unexpected data after the value")
		}
	}
	if p.err != "" {
		return nil, sandbox.Errorf(sandbox.EToolFailed, "", "the tool returned invalid JSON: "+p.err)
	}
	return &lazyDoc{s: p.s, nodes: p.nodes, kids: p.kids, nobj: p.nobj}, nil
}

type jparser struct {
	s     string
	i     int
	err   string
	nodes []jnode
	kids  []int32
	stack []int32 // children of the open containers
	nobj  int     // number of objects
}

func (p *jparser) fail(msg string) {
	if p.err == "" {
		p.err = fmt.Sprintf("%s at offset %d", msg, p.i)
	}
}

// ws skips whitespace and reports whether there was any.
func (p *jparser) ws() bool {
	start := p.i
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return p.i != start
		}
	}
	return p.i != start
}

// value parses one value and returns its node index, or -1.
func (p *jparser) value(depth int) int32 {
	if p.i >= len(p.s) {
		p.fail("unexpected end")
		return -1
	}
	switch c := p.s[p.i]; c {
	case '{', '[':
		if depth >= maxBuildDepth {
			p.fail(fmt.Sprintf("nested deeper than %d levels", maxBuildDepth))
			return -1
		}
		if c == '{' {
			return p.object(depth + 1)
		}
		return p.array(depth + 1)
	case '"':
		return p.str()
	case 't':
		return p.literal("true", kTrue)
	case 'f':
		return p.literal("false", kFalse)
	case 'n':
		return p.literal("null", kNull)
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return p.number()
		}
		p.fail(fmt.Sprintf("unexpected character %q", c))
		return -1
	}
}

func (p *jparser) add(n jnode) int32 {
	p.nodes = append(p.nodes, n)
	return int32(len(p.nodes) - 1)
}

func (p *jparser) literal(word string, kind uint8) int32 {
	if len(p.s)-p.i < len(word) || p.s[p.i:p.i+len(word)] != word {
		p.fail("invalid literal")
		return -1
	}
	start := p.i
	p.i += len(word)
	return p.add(jnode{start: int32(start), end: int32(p.i), kind: kind, flags: fCanon})
}

// close finishes the container at idx whose children are on the stack
// from base.
func (p *jparser) close(idx int32, base int, n int, flags uint8, height uint16) int32 {
	kid := int32(len(p.kids))
	p.kids = append(p.kids, p.stack[base:]...)
	p.stack = p.stack[:base]
	nd := &p.nodes[idx]
	nd.end = int32(p.i)
	nd.kid = kid
	nd.n = int32(n)
	nd.last = int32(len(p.nodes))
	nd.flags = flags
	nd.height = height + 1
	return idx
}

func (p *jparser) object(depth int) int32 {
	idx := p.add(jnode{start: int32(p.i), kind: kObject})
	p.nobj++
	base := len(p.stack)
	p.i++ // {
	flags := fCanon | fPlainKeys
	var height uint16
	if p.ws() {
		flags &^= fCanon
	}
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return p.close(idx, base, 0, flags, 0)
	}
	for {
		if p.ws() {
			flags &^= fCanon
		}
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			p.fail("expected a string key")
			return -1
		}
		k := p.str()
		if k < 0 {
			return -1
		}
		kn := p.nodes[k]
		if kn.flags&fEsc != 0 || isArrayIndex(p.s[kn.start+1:kn.end-1]) {
			flags &^= fPlainKeys
		}
		if p.ws() {
			flags &^= fCanon
		}
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			p.fail("expected ':'")
			return -1
		}
		p.i++
		if p.ws() {
			flags &^= fCanon
		}
		v := p.value(depth)
		if v < 0 {
			return -1
		}
		vn := &p.nodes[v]
		if vn.flags&fCanon == 0 {
			flags &^= fCanon
		}
		height = max(height, vn.height)
		p.stack = append(p.stack, k, v)
		if p.ws() {
			flags &^= fCanon
		}
		if p.i >= len(p.s) {
			p.fail("unexpected end in object")
			return -1
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			n := (len(p.stack) - base) / 2
			if flags&fPlainKeys != 0 && p.dupKeys(p.stack[base:]) {
				flags &^= fPlainKeys
			}
			if flags&fPlainKeys == 0 {
				flags &^= fCanon
			}
			return p.close(idx, base, n, flags, height)
		default:
			p.fail("expected ',' or '}'")
			return -1
		}
	}
}

// dupKeys reports whether plain keys (key, value node pairs) repeat.
func (p *jparser) dupKeys(pairs []int32) bool {
	n := len(pairs) / 2
	if n < 2 {
		return false
	}
	key := func(i int) string {
		k := &p.nodes[pairs[2*i]]
		return p.s[k.start+1 : k.end-1]
	}
	if n <= 8 {
		var keys [8]string
		for i := 0; i < n; i++ {
			keys[i] = key(i)
			for j := 0; j < i; j++ {
				if keys[j] == keys[i] {
					return true
				}
			}
		}
		return false
	}
	seen := make(map[string]struct{}, n)
	for i := 0; i < n; i++ {
		k := key(i)
		if _, ok := seen[k]; ok {
			return true
		}
		seen[k] = struct{}{}
	}
	return false
}

func (p *jparser) array(depth int) int32 {
	idx := p.add(jnode{start: int32(p.i), kind: kArray})
	base := len(p.stack)
	p.i++ // [
	flags := fCanon
	var height uint16
	if p.ws() {
		flags &^= fCanon
	}
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return p.close(idx, base, 0, flags, 0)
	}
	for {
		if p.ws() {
			flags &^= fCanon
		}
		v := p.value(depth)
		if v < 0 {
			return -1
		}
		vn := &p.nodes[v]
		if vn.flags&fCanon == 0 {
			flags &^= fCanon
		}
		height = max(height, vn.height)
		p.stack = append(p.stack, v)
		if p.ws() {
			flags &^= fCanon
		}
		if p.i >= len(p.s) {
			p.fail("unexpected end in array")
			return -1
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return p.close(idx, base, len(p.stack)-base, flags, height)
		default:
			p.fail("expected ',' or ']'")
			return -1
		}
	}
}

// str validates a string. It is canonical when JSON.stringify would write
// the same bytes: valid UTF-8, and escapes only where JSON.stringify puts
// them, in its spelling.
func (p *jparser) str() int32 {
	start := p.i
	j := p.i + 1
	flags := fCanon
	ascii := true
	for {
		// Skip the bytes that need no attention, eight at a time.
		for j+8 <= len(p.s) {
			b := p.s[j : j+8]
			w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
				uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
			if hasSpecialByte(w) {
				break
			}
			j += 8
		}
		for j < len(p.s) && plainByte[p.s[j]] {
			j++
		}
		if j >= len(p.s) {
			p.i = j
			p.fail("unterminated string")
			return -1
		}
		c := p.s[j]
		switch {
		case c == '"':
			p.i = j + 1
			if !ascii && !utf8.ValidString(p.s[start+1:j]) {
				// Decoded (bad bytes become U+FFFD), never a substring.
				flags = flags&^fCanon | fEsc
			}
			return p.add(jnode{start: int32(start), end: int32(p.i), kind: kString, flags: flags})
		case c < 0x20:
			p.i = j
			p.fail("control character in string")
			return -1
		case c == '\\':
			flags |= fEsc
			if j+1 >= len(p.s) {
				p.i = j
				p.fail("unterminated escape")
				return -1
			}
			j++
			switch p.s[j] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
			case '/':
				flags &^= fCanon
			case 'u':
				if j+4 >= len(p.s) {
					p.i = j
					p.fail("short \\u escape")
					return -1
				}
				h := p.s[j+1 : j+5]
				n, err := strconv.ParseUint(h, 16, 16)
				if err != nil {
					p.i = j
					p.fail("invalid \\u escape")
					return -1
				}
				// JSON.stringify writes \u00xx (lower case) only for
				// control characters without a short escape.
				if n >= 0x20 || n == '\b' || n == '\f' || n == '\n' || n == '\r' || n == '\t' || h != fmt.Sprintf("%04x", n) {
					flags &^= fCanon
				}
				j += 4
			default:
				p.i = j
				p.fail("invalid escape")
				return -1
			}
			j++
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			j++
		}
	}
}

func (p *jparser) number() int32 {
	start := p.i
	j := p.i
	neg := false
	if j < len(p.s) && p.s[j] == '-' {
		neg = true
		j++
	}
	digits := j
	for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
		j++
	}
	if j == digits || (p.s[digits] == '0' && j-digits > 1) {
		p.i = j
		p.fail("invalid number")
		return -1
	}
	intDigits := j - digits
	canon := true
	sig := intDigits
	if p.s[digits] == '0' {
		sig = 0
	}
	if j < len(p.s) && p.s[j] == '.' {
		j++
		k := j
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == k {
			p.i = j
			p.fail("invalid number")
			return -1
		}
		frac := p.s[k:j]
		if frac[len(frac)-1] == '0' {
			canon = false
		}
		if sig == 0 {
			z := 0
			for z < len(frac) && frac[z] == '0' {
				z++
			}
			if z > 5 { // below 1e-6 JavaScript uses an exponent
				canon = false
			}
			sig = len(frac) - z
		} else {
			sig += len(frac)
		}
	}
	if j < len(p.s) && (p.s[j] == 'e' || p.s[j] == 'E') {
		canon = false
		j++
		if j < len(p.s) && (p.s[j] == '+' || p.s[j] == '-') {
			j++
		}
		k := j
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == k {
			p.i = j
			p.fail("invalid number")
			return -1
		}
	}
	// Up to 15 significant digits a decimal is the shortest form of the
	// double it parses to, which is what JavaScript writes; -0 is written 0.
	if sig > 15 || (neg && sig == 0) {
		canon = false
	}
	p.i = j
	var flags uint8
	if canon {
		flags = fCanon
	}
	return p.add(jnode{start: int32(start), end: int32(j), kind: kNumber, flags: flags})
}

// plainByte marks the string bytes str can skip: printable ASCII other
// than '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// hasSpecialByte reports whether one of the eight bytes in w is not a
// plainByte: below 0x20, '"', '\\' or 0x80 and above (a superset is fine:
// the byte loop decides).
func hasSpecialByte(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	ctl := (w - 0x20*ones) &^ w                           // high bit set where a byte < 0x20 (or >= 0x80)
	quote := ((w ^ '"'*ones) - ones) &^ (w ^ '"'*ones)    // zero bytes of w^'"'
	bslash := ((w ^ '\\'*ones) - ones) &^ (w ^ '\\'*ones) // zero bytes of w^'\\'
	return (ctl|quote|bslash|w)&highs != 0
}

// isArrayIndex reports whether s is a canonical array index (0 ..
// 2^32-2), the keys goja enumerates first, in ascending order.
func isArrayIndex(s string) bool {
	return arrayIndex(s) >= 0
}

func arrayIndex(s string) int64 {
	if s == "" || len(s) > 10 || (s[0] == '0' && len(s) > 1) {
		return -1
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	if n >= math.MaxUint32 {
		return -1
	}
	return n
}

// numberValue converts a validated number literal as JSON.parse does;
// integral values become integers.
func numberValue(rt *goja.Runtime, lit string) goja.Value {
	integral := true
	for i := 0; i < len(lit); i++ {
		if c := lit[i]; c == '.' || c == 'e' || c == 'E' {
			integral = false
			break
		}
	}
	if integral && len(lit) < 16 && lit != "-0" {
		n, _ := strconv.ParseInt(lit, 10, 64)
		return rt.ToValue(n)
	}
	f, _ := strconv.ParseFloat(lit, 64) // validated; ±Inf on overflow
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 && !(f == 0 && math.Signbit(f)) {
		return rt.ToValue(int64(f))
	}
	return rt.ToValue(f)
}

// decodeString decodes a validated JSON string (with its quotes) into
// UTF-16, keeping lone surrogates as JSON.parse does.
func decodeString(s string) goja.String {
	var u []uint16
	for j := 1; j < len(s)-1; {
		c := s[j]
		switch {
		case c == '\\':
			j++
			switch s[j] {
			case 'b':
				u = append(u, '\b')
			case 'f':
				u = append(u, '\f')
			case 'n':
				u = append(u, '\n')
			case 'r':
				u = append(u, '\r')
			case 't':
				u = append(u, '\t')
			case 'u':
				n, _ := strconv.ParseUint(s[j+1:j+5], 16, 16)
				u = append(u, uint16(n))
				j += 4
			default: // " \ /
				u = append(u, uint16(s[j]))
			}
			j++
		case c < utf8.RuneSelf:
			u = append(u, uint16(c))
			j++
		default:
			r, size := utf8.DecodeRuneInString(s[j:])
			u = utf16.AppendRune(u, r)
			j += size
		}
	}
	return goja.StringFromUTF16(u)
}
