package plan

import (
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/sandcall/sandcall/sandbox"
)

// Module plans a WebAssembly module: its imports ("module.name", in
// order), the names of known that its data segments hold (the
// strings of a module are its data, not delimited: a known name found
// inside a longer string is listed too), and Dynamic 1 when it imports a
// call function of the host ABI (call or call_async): the name it passes
// is data the plan cannot tie to a call. A module that is not a valid
// binary (bad magic, a section running past the end) is E_MODULE_INVALID;
// sections the plan does not need are skipped unread.
func Module(m []byte, known []string) (sandbox.Plan, *sandbox.Error) {
	pl := sandbox.Plan{Tools: []sandbox.PlanTool{}}
	if len(m) < 8 || string(m[:4]) != "\x00asm" {
		return pl, invalid("not a WebAssembly binary module")
	}
	r := wreader{b: m, pos: 8}
	var data [][]byte
	for !r.eof() {
		id, ok := r.byte()
		size, ok2 := r.u32()
		if !ok || !ok2 || int(size) > len(r.b)-r.pos {
			return pl, invalid("a section runs past the end of the module")
		}
		sec := wreader{b: r.b[r.pos : r.pos+int(size)]}
		r.pos += int(size)
		switch id {
		case 2:
			imps, ok := sec.imports()
			if !ok {
				return pl, invalid("the import section cannot be read")
			}
			pl.Imports = imps
		case 11:
			segs, ok := sec.dataSegments()
			if !ok {
				return pl, invalid("the data section cannot be read")
			}
			data = segs
		}
	}
	for _, imp := range pl.Imports {
		if imp == "sandcall.call" || imp == "sandcall.call_async" {
			pl.Dynamic = 1
			break
		}
	}
	if len(known) > 0 && len(data) > 0 {
		for _, name := range scanNames(data, known) {
			pl.Tools = append(pl.Tools, sandbox.PlanTool{Name: name})
		}
	}
	return pl, nil
}

func invalid(msg string) *sandbox.Error {
	return sandbox.Errorf(sandbox.EModuleInvalid, "Send a valid WebAssembly module built for the sandcall host ABI.", msg)
}

// maxName is the longest tool name looked for in data.
const maxName = 64

// trie is the known names, to find them in data in one pass.
type trie struct {
	next []map[byte]int32 // node → byte → node; node 0 is the root
	end  []string         // node → the name ending there, or ""
}

func newTrie(names []string) *trie {
	t := &trie{next: []map[byte]int32{{}}, end: []string{""}}
	for _, n := range names {
		if n == "" || len(n) > maxName {
			continue
		}
		at := int32(0)
		for i := 0; i < len(n); i++ {
			nx, ok := t.next[at][n[i]]
			if !ok {
				nx = int32(len(t.next))
				t.next = append(t.next, map[byte]int32{})
				t.end = append(t.end, "")
				t.next[at][n[i]] = nx
			}
			at = nx
		}
		t.end[at] = n
	}
	return t
}

// scanNames returns, sorted, the known names found in the data segments,
// wherever they start.
func scanNames(segs [][]byte, known []string) []string {
	t := newTrie(known)
	found := map[string]bool{}
	for _, seg := range segs {
		for i := 0; i < len(seg); i++ {
			at := int32(0)
			for j := i; j < len(seg) && j-i < maxName; j++ {
				nx, ok := t.next[at][seg[j]]
				if !ok {
					break
				}
				at = nx
				if n := t.end[at]; n != "" {
					found[n] = true
				}
			}
		}
	}
	out := make([]string, 0, len(found))
	for n := range found {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// wreader reads a WebAssembly binary.
type wreader struct {
	b   []byte
	pos int
}

func (r *wreader) eof() bool { return r.pos >= len(r.b) }

func (r *wreader) byte() (byte, bool) {
	if r.eof() {
		return 0, false
	}
	c := r.b[r.pos]
	r.pos++
	return c, true
}

// u32 reads an unsigned LEB128 of at most 5 bytes.
func (r *wreader) u32() (uint32, bool) {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c, ok := r.byte()
		if !ok {
			return 0, false
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}

func (r *wreader) bytes(n uint32) ([]byte, bool) {
	if int(n) > len(r.b)-r.pos {
		return nil, false
	}
	b := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, true
}

func (r *wreader) name() (string, bool) {
	n, ok := r.u32()
	if !ok {
		return "", false
	}
	b, ok := r.bytes(n)
	if !ok || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// skipConst skips a constant expression (up to its end opcode 0x0b).
func (r *wreader) skipConst() bool {
	for !r.eof() {
		op, _ := r.byte()
		switch op {
		case 0x0b:
			return true
		case 0x41, 0x42, 0x23: // i32.const, i64.const (LEB), global.get
			for {
				c, ok := r.byte()
				if !ok {
					return false
				}
				if c&0x80 == 0 {
					break
				}
			}
		case 0x44: // f64.const
			if _, ok := r.bytes(8); !ok {
				return false
			}
		case 0x43: // f32.const
			if _, ok := r.bytes(4); !ok {
				return false
			}
		}
	}
	return false
}

// maxImports caps the imports a plan lists (the engine refuses a module
// with more functions than that anyway).
const maxImports = 10000

func (r *wreader) imports() ([]string, bool) {
	n, ok := r.u32()
	if !ok || n > maxImports {
		return nil, false
	}
	out := make([]string, 0, n)
	for range n {
		mod, ok1 := r.name()
		name, ok2 := r.name()
		kind, ok3 := r.byte()
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		switch kind {
		case 0: // func: type index
			if _, ok := r.u32(); !ok {
				return nil, false
			}
		case 1: // table: reftype, limits
			if _, ok := r.byte(); !ok || !r.limits() {
				return nil, false
			}
		case 2: // memory: limits
			if !r.limits() {
				return nil, false
			}
		case 3: // global: valtype, mutability
			if _, ok := r.bytes(2); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
		imp := mod + "." + name
		if !slices.Contains(out, imp) {
			out = append(out, sandbox.Cap(imp, 256))
		}
	}
	return out, true
}

func (r *wreader) limits() bool {
	flag, ok := r.byte()
	if !ok {
		return false
	}
	if _, ok := r.u32(); !ok {
		return false
	}
	if flag&1 != 0 {
		_, ok = r.u32()
	}
	return ok
}

// dataSegments returns the bytes of every data segment.
func (r *wreader) dataSegments() ([][]byte, bool) {
	n, ok := r.u32()
	if !ok || int(n) > len(r.b) {
		return nil, false
	}
	out := make([][]byte, 0, n)
	for range n {
		flag, ok := r.u32()
		if !ok {
			return nil, false
		}
		switch flag {
		case 0: // active, memory 0, offset expression
			if !r.skipConst() {
				return nil, false
			}
		case 1: // passive
		case 2: // active, memory index, offset expression
			if _, ok := r.u32(); !ok || !r.skipConst() {
				return nil, false
			}
		default:
			return nil, false
		}
		size, ok := r.u32()
		if !ok {
			return nil, false
		}
		b, ok := r.bytes(size)
		if !ok {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}
