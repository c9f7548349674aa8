// Package prevalidate checks a WebAssembly module binary against sandcall's
// structural limits before wazero decodes or compiles it. It reads the
// module once, front to back, with no recursion and no allocation
// proportional to anything the module declares, so that an abusive module
// (a compile-time bomb, a 4 GiB memory, a huge table) is refused cheaply with
// E_MODULE_LIMIT, and a malformed one with E_MODULE_INVALID.
//
// It is not a validator: it does not type-check instructions or resolve
// indices; wazero does that after. It does read every instruction of every
// function body, so that nesting depth and br_table sizes are known, and it
// refuses instructions outside the feature set wazero is configured with
// (WebAssembly 2.0: sign extension, saturating conversions, bulk memory,
// reference types, multi-value, SIMD).
package prevalidate

import (
	"fmt"

	"github.com/sandcall/sandcall/sandbox"
)

// Limits are the structural bounds a module must respect. A zero field
// means the default of Defaults.
type Limits struct {
	ModuleBytes int    // whole binary; default 16 MiB
	MemoryPages uint32 // declared initial memory, in 64 KiB pages; default 4096 (256 MiB)
	Functions   int    // imported plus defined functions; default 10,000
	BodyBytes   int    // one function body; default 256 KiB
	Locals      int    // locals declared by one function; default 50,000
	Nesting     int    // control nesting depth in one body; default 2,048 (Go nests one block per resume point: a Go program with encoding/json needs 550)
	BrTable     int    // targets of one br_table; default 10,000
	TableSize   int    // initial size of a table, and its maximum if the module uses table.grow; default 10,000
	Types       int    // entries of the type section; default 10,000
	Imports     int    // entries of the import section; default 1,000
	Globals     int    // entries of the global section; default 10,000
	Exports     int    // entries of the export section; default 10,000
}

// Defaults returns the default limits.
func Defaults() Limits {
	return Limits{
		ModuleBytes: 16 << 20,
		MemoryPages: 4096,
		Functions:   10000,
		BodyBytes:   256 << 10,
		Locals:      50000,
		Nesting:     2048,
		BrTable:     10000,
		TableSize:   10000,
		Types:       10000,
		Imports:     1000,
		Globals:     10000,
		Exports:     10000,
	}
}

func (l Limits) resolve() Limits {
	d := Defaults()
	pick := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	pick(&l.ModuleBytes, d.ModuleBytes)
	if l.MemoryPages == 0 {
		l.MemoryPages = d.MemoryPages
	}
	pick(&l.Functions, d.Functions)
	pick(&l.BodyBytes, d.BodyBytes)
	pick(&l.Locals, d.Locals)
	pick(&l.Nesting, d.Nesting)
	pick(&l.BrTable, d.BrTable)
	pick(&l.TableSize, d.TableSize)
	pick(&l.Types, d.Types)
	pick(&l.Imports, d.Imports)
	pick(&l.Globals, d.Globals)
	pick(&l.Exports, d.Exports)
	return l
}

// Import is one function import of a module.
type Import struct{ Module, Name string }

// Allowed reports whether a module may import a function; nil allows none.
type Allowed func(Import) bool

// Check reads module and returns nil if it is well-formed enough to hand to
// wazero and within lim, or an *sandbox.Error with E_MODULE_INVALID or
// E_MODULE_LIMIT. It never panics, whatever the input.
func Check(module []byte, lim Limits, allowed Allowed) *sandbox.Error {
	_, err := check(module, lim, allowed)
	return err
}

func check(module []byte, lim Limits, allowed Allowed) (*checker, *sandbox.Error) {
	lim = lim.resolve()
	if len(module) > lim.ModuleBytes {
		return nil, limitf("the module is %d bytes, over the limit of %d bytes", len(module), lim.ModuleBytes)
	}
	c := &checker{r: reader{b: module}, lim: lim, allowed: allowed}
	return c, c.module()
}

// entryLoop is an empty loop: block type empty, end.
var entryLoop = []byte{0x03, 0x40, 0x0b}

// CheckAndInstrument checks module like Check and returns a copy in which
// every function body starts with an empty loop. wazero checks for the end
// of the run (WithCloseOnContextDone) only at loop headers, so a module with
// no loops (an exponential call tree) could otherwise never be interrupted;
// with the loop, every function entry is a check. The empty loop changes
// nothing else: no branch can target it and it has no type.
func CheckAndInstrument(module []byte, lim Limits, allowed Allowed) ([]byte, *sandbox.Error) {
	c, err := check(module, lim, allowed)
	if err != nil {
		return nil, err
	}
	if len(c.bodies) == 0 {
		return module, nil
	}
	var code []byte
	code = appendU32(code, uint32(len(c.bodies)))
	for _, b := range c.bodies {
		code = appendU32(code, uint32(b.end-b.start+len(entryLoop)))
		code = append(code, module[b.start:b.instr]...)
		code = append(code, entryLoop...)
		code = append(code, module[b.instr:b.end]...)
	}
	out := make([]byte, 0, len(module)+len(code)-(c.codeEnd-c.codeStart)+8)
	out = append(out, module[:c.codeStart]...)
	out = append(out, 10)
	out = appendU32(out, uint32(len(code)))
	out = append(out, code...)
	out = append(out, module[c.codeEnd:]...)
	return out, nil
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

const (
	hintInvalid = "Submit a WebAssembly binary module (wasm32, version 1), as produced by a compiler or wat2wasm."
	hintLimit   = "Make the module smaller or simpler: see the WebAssembly limits in the run_code description."
)

func invalidf(format string, args ...any) *sandbox.Error {
	return sandbox.Errorf(sandbox.EModuleInvalid, hintInvalid, "invalid module: "+fmt.Sprintf(format, args...))
}

func limitf(format string, args ...any) *sandbox.Error {
	return sandbox.Errorf(sandbox.EModuleLimit, hintLimit, fmt.Sprintf(format, args...))
}

// errEOF is what every read past the end of its section returns.
var errEOF = invalidf("unexpected end of data")

// reader reads a byte slice; every method bounds-checks.
type reader struct {
	b   []byte
	pos int
}

func (r *reader) eof() bool { return r.pos >= len(r.b) }

func (r *reader) byte() (byte, *sandbox.Error) {
	if r.pos >= len(r.b) {
		return 0, errEOF
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *reader) bytes(n int) ([]byte, *sandbox.Error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, errEOF
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s, nil
}

// u32 reads an unsigned LEB128 of at most 5 bytes whose value fits 32 bits.
func (r *reader) u32() (uint32, *sandbox.Error) {
	var v uint32
	for i := 0; i < 5; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == 4 && c&0xf0 != 0 {
			return 0, invalidf("integer too large")
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, invalidf("integer representation too long")
}

// sleb skips a signed LEB128 of at most maxBytes bytes (5 for i32 and s33
// block types, 10 for i64). Range checks of the last byte are wazero's.
func (r *reader) sleb(maxBytes int) *sandbox.Error {
	for i := 0; i < maxBytes; i++ {
		c, err := r.byte()
		if err != nil {
			return err
		}
		if c&0x80 == 0 {
			return nil
		}
	}
	return invalidf("integer representation too long")
}

// count reads a vector length and checks it against max and against the
// bytes left (each entry takes at least minBytes).
func (r *reader) count(what string, max, minBytes int) (int, *sandbox.Error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if int64(n) > int64(max) {
		return 0, limitf("the module declares %d %s, over the limit of %d", n, what, max)
	}
	if int64(n)*int64(minBytes) > int64(len(r.b)-r.pos) {
		return 0, errEOF
	}
	return int(n), nil
}

func (r *reader) name() (string, *sandbox.Error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(int(n))
	if err != nil || n > 1<<16 {
		return "", invalidf("bad name")
	}
	return string(b), nil
}

type checker struct {
	r       reader
	lim     Limits
	allowed Allowed

	funcs       int // imported + declared
	declared    int // function section count
	haveFuncSec bool
	tableMax    []int64 // -1 when no maximum
	usesGrow    bool
	bodiesSeen  bool

	// For CheckAndInstrument: where the code section and each body are.
	codeStart, codeEnd int // the section's id byte, and the end of its contents
	bodies             []bodySpan
}

// bodySpan locates one function body in the module: its locals run from
// start to instr, its instructions from instr to end.
type bodySpan struct{ start, instr, end int }

func (c *checker) module() *sandbox.Error {
	head, err := c.r.bytes(8)
	if err != nil {
		return invalidf("not a WebAssembly module (too short)")
	}
	if string(head[:4]) != "\x00asm" {
		return invalidf("not a WebAssembly module (bad magic number)")
	}
	if string(head[4:]) != "\x01\x00\x00\x00" {
		return invalidf("unsupported binary version (only WebAssembly version 1 modules, not components)")
	}
	last := byte(0)
	for !c.r.eof() {
		secStart := c.r.pos
		id, err := c.r.byte()
		if err != nil {
			return err
		}
		size, err := c.r.u32()
		if err != nil {
			return err
		}
		body, err := c.r.bytes(int(size))
		if err != nil {
			return invalidf("section %d runs past the end of the module", id)
		}
		if id != 0 {
			if order(id) <= order(last) {
				return invalidf("section %d is out of order or repeated", id)
			}
			last = id
		}
		s := reader{b: body}
		var serr *sandbox.Error
		switch id {
		case 0: // custom: a name, then anything
			if _, serr = s.name(); serr == nil {
				s.pos = len(s.b)
			}
		case 1:
			_, serr = s.count("types", c.lim.Types, 1)
			s.pos = len(s.b)
		case 2:
			serr = c.imports(&s)
		case 3:
			serr = c.functions(&s)
		case 4:
			serr = c.tableSection(&s)
		case 5:
			serr = c.memorySection(&s)
		case 6:
			_, serr = s.count("globals", c.lim.Globals, 1)
			s.pos = len(s.b)
		case 7:
			_, serr = s.count("exports", c.lim.Exports, 1)
			s.pos = len(s.b)
		case 8, 9, 11, 12: // start, element, data, data count: wazero checks them
			s.pos = len(s.b)
		case 10:
			c.codeStart, c.codeEnd = secStart, c.r.pos
			serr = c.code(&s, c.r.pos-len(body))
		default:
			return invalidf("unknown or unsupported section %d", id)
		}
		if serr != nil {
			return serr
		}
		if !s.eof() {
			return invalidf("section %d has %d bytes past its contents", id, len(s.b)-s.pos)
		}
	}
	if c.declared > 0 && !c.bodiesSeen {
		return invalidf("the function section declares %d functions but there is no code section", c.declared)
	}
	if c.usesGrow {
		for i, m := range c.tableMax {
			if m < 0 || m > int64(c.lim.TableSize) {
				return limitf("table %d may grow without a bound of %d elements (table.grow on a table without a small maximum)", i, c.lim.TableSize)
			}
		}
	}
	return nil
}

// order gives the required position of a known section (the data count
// section sits between element and code).
func order(id byte) int {
	switch id {
	case 12:
		return 10 // after element (9), before code (10 → 11)
	case 10:
		return 11
	case 11:
		return 12
	}
	return int(id)
}

func (c *checker) imports(s *reader) *sandbox.Error {
	n, err := s.count("imports", c.lim.Imports, 4)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		mod, err := s.name()
		if err != nil {
			return err
		}
		name, err := s.name()
		if err != nil {
			return err
		}
		kind, err := s.byte()
		if err != nil {
			return err
		}
		switch kind {
		case 0x00:
			if _, err := s.u32(); err != nil {
				return err
			}
			if c.allowed == nil || !c.allowed(Import{Module: mod, Name: name}) {
				return sandbox.Errorf(sandbox.EModuleInvalid,
					"Import only the functions of the \"sandcall\" host module (see bindings/abi.md) and of \"wasi_snapshot_preview1\".",
					fmt.Sprintf("the module imports %s, which is not provided", quoteImport(mod, name)))
			}
			c.funcs++
			if c.funcs > c.lim.Functions {
				return limitf("the module has more than %d functions", c.lim.Functions)
			}
		default:
			what := map[byte]string{1: "a table", 2: "a memory", 3: "a global", 4: "a tag"}[kind]
			if what == "" {
				return invalidf("import %s has unknown kind %d", quoteImport(mod, name), kind)
			}
			return sandbox.Errorf(sandbox.EModuleInvalid,
				"Define memories, tables and globals in the module itself; only functions may be imported.",
				fmt.Sprintf("the module imports %s (%s): only functions may be imported", what, quoteImport(mod, name)))
		}
	}
	return nil
}

func quoteImport(mod, name string) string {
	q := fmt.Sprintf("%q.%q", mod, name)
	if len(q) > 200 {
		q = q[:200] + "…"
	}
	return q
}

func (c *checker) functions(s *reader) *sandbox.Error {
	n, err := s.count("functions", c.lim.Functions, 1)
	if err != nil {
		return err
	}
	if c.funcs+n > c.lim.Functions {
		return limitf("the module has %d functions, over the limit of %d", c.funcs+n, c.lim.Functions)
	}
	for i := 0; i < n; i++ {
		if _, err := s.u32(); err != nil {
			return err
		}
	}
	c.funcs += n
	c.declared = n
	c.haveFuncSec = true
	return nil
}

// limits reads a limits structure; is64/shared flags are refused.
func (c *checker) limits(s *reader, what string) (min uint32, max int64, err *sandbox.Error) {
	flag, err := s.byte()
	if err != nil {
		return 0, 0, err
	}
	if flag > 1 {
		if flag == 2 || flag == 3 {
			return 0, 0, invalidf("shared %s (threads) are not supported", what)
		}
		return 0, 0, invalidf("%s limits flag 0x%02x is not supported (64-bit memories and tables are not)", what, flag)
	}
	if min, err = s.u32(); err != nil {
		return 0, 0, err
	}
	max = -1
	if flag == 1 {
		m, err := s.u32()
		if err != nil {
			return 0, 0, err
		}
		max = int64(m)
	}
	return min, max, nil
}

func (c *checker) tableSection(s *reader) *sandbox.Error {
	n, err := s.count("tables", 100, 3)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		rt, err := s.byte()
		if err != nil {
			return err
		}
		if rt != 0x70 && rt != 0x6f {
			return invalidf("table %d has unknown element type 0x%02x", i, rt)
		}
		min, max, err := c.limits(s, "tables")
		if err != nil {
			return err
		}
		if int64(min) > int64(c.lim.TableSize) {
			return limitf("table %d starts with %d elements, over the limit of %d", i, min, c.lim.TableSize)
		}
		c.tableMax = append(c.tableMax, max)
	}
	return nil
}

func (c *checker) memorySection(s *reader) *sandbox.Error {
	n, err := s.count("memories", 1, 2)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		min, _, err := c.limits(s, "memories")
		if err != nil {
			return err
		}
		if min > c.lim.MemoryPages {
			return sandbox.Errorf(sandbox.EModuleLimit,
				"Declare a smaller initial memory: the run's memory limit applies to the initial size too.",
				fmt.Sprintf("the module's initial memory is %d pages (%d MiB), over the run's limit of %d pages (%d MiB)",
					min, uint64(min)*64/1024, c.lim.MemoryPages, uint64(c.lim.MemoryPages)*64/1024))
		}
	}
	return nil
}

func (c *checker) code(s *reader, base int) *sandbox.Error {
	n, err := s.count("function bodies", c.lim.Functions, 2)
	if err != nil {
		return err
	}
	if n != c.declared {
		return invalidf("the code section has %d bodies for %d declared functions", n, c.declared)
	}
	c.bodiesSeen = true
	for i := 0; i < n; i++ {
		size, err := s.u32()
		if err != nil {
			return err
		}
		if int64(size) > int64(c.lim.BodyBytes) {
			return limitf("function %d's body is %d bytes, over the limit of %d", c.funcs-c.declared+i, size, c.lim.BodyBytes)
		}
		start := s.pos
		b, err := s.bytes(int(size))
		if err != nil {
			return err
		}
		instr, err := c.body(b, c.funcs-c.declared+i)
		if err != nil {
			return err
		}
		c.bodies = append(c.bodies, bodySpan{start: base + start, instr: base + start + instr, end: base + s.pos})
	}
	return nil
}

// body checks one function body and returns the offset of its first
// instruction.
func (c *checker) body(b []byte, fn int) (int, *sandbox.Error) {
	r := reader{b: b}
	groups, err := r.count("local groups", c.lim.Locals, 2)
	if err != nil {
		return 0, err
	}
	total := 0
	for i := 0; i < groups; i++ {
		n, err := r.u32()
		if err != nil {
			return 0, err
		}
		if _, err := r.byte(); err != nil {
			return 0, err
		}
		if int64(total)+int64(n) > int64(c.lim.Locals) {
			return 0, limitf("function %d declares more than %d locals", fn, c.lim.Locals)
		}
		total += int(n)
	}
	instr := r.pos
	depth := 1
	for {
		if r.eof() {
			return 0, invalidf("function %d's body ends without its final end", fn)
		}
		op, _ := r.byte()
		if op == 0x0b { // end
			depth--
			if depth == 0 {
				if !r.eof() {
					return 0, invalidf("function %d has instructions after its final end", fn)
				}
				return instr, nil
			}
			continue
		}
		if op == 0x02 || op == 0x03 || op == 0x04 { // block, loop, if
			depth++
			if depth > c.lim.Nesting {
				return 0, limitf("function %d nests blocks more than %d deep", fn, c.lim.Nesting)
			}
		}
		if err := c.immediates(&r, op, fn); err != nil {
			return 0, err
		}
	}
}

// immediates skips the immediates of op.
func (c *checker) immediates(r *reader, op byte, fn int) *sandbox.Error {
	var err *sandbox.Error
	switch {
	case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0f || op == 0x1a || op == 0x1b || op == 0xd1:
		// unreachable, nop, else, return, drop, select, ref.is_null
	case op >= 0x02 && op <= 0x04: // block type: 0x40, a value type, or an s33 type index
		var t byte
		if t, err = r.byte(); err == nil && t&0x80 != 0 {
			err = r.sleb(4)
		}
	case op == 0x0c || op == 0x0d || op == 0x10 || op == 0xd2 || (op >= 0x20 && op <= 0x26):
		// br, br_if, call, ref.func, local.*, global.*, table.get/set
		_, err = r.u32()
	case op == 0x0e: // br_table
		var n int
		if n, err = r.count("br_table targets", c.lim.BrTable, 1); err != nil {
			if err.Code == sandbox.EModuleLimit {
				err = limitf("function %d has a br_table with more than %d targets", fn, c.lim.BrTable)
			}
			return err
		}
		for i := 0; i <= n && err == nil; i++ {
			_, err = r.u32()
		}
	case op == 0x11: // call_indirect: type, table
		if _, err = r.u32(); err == nil {
			_, err = r.u32()
		}
	case op == 0x1c: // select t*
		var n int
		if n, err = r.count("select types", 16, 1); err == nil {
			_, err = r.bytes(n)
		}
	case op >= 0x28 && op <= 0x3e: // loads and stores: memarg
		err = memarg(r)
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		_, err = r.u32()
	case op == 0x41:
		err = r.sleb(5)
	case op == 0x42:
		err = r.sleb(10)
	case op == 0x43:
		_, err = r.bytes(4)
	case op == 0x44:
		_, err = r.bytes(8)
	case op >= 0x45 && op <= 0xc4: // numeric, sign extension
	case op == 0xd0: // ref.null t
		_, err = r.byte()
	case op == 0xfc:
		err = c.prefixFC(r, fn)
	case op == 0xfd:
		err = prefixFD(r, fn)
	default:
		return invalidf("function %d uses unsupported instruction 0x%02x", fn, op)
	}
	return err
}

func memarg(r *reader) *sandbox.Error {
	if _, err := r.u32(); err != nil {
		return err
	}
	_, err := r.u32()
	return err
}

func (c *checker) prefixFC(r *reader, fn int) *sandbox.Error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 7: // saturating truncations
	case sub == 8: // memory.init data, mem
		if _, err = r.u32(); err == nil {
			_, err = r.byte()
		}
	case sub == 9 || sub == 13 || sub == 16 || sub == 17: // data.drop, elem.drop, table.size, table.fill
		_, err = r.u32()
	case sub == 15: // table.grow
		c.usesGrow = true
		_, err = r.u32()
	case sub == 10: // memory.copy
		_, err = r.bytes(2)
	case sub == 11: // memory.fill
		_, err = r.byte()
	case sub == 12 || sub == 14: // table.init, table.copy
		if _, err = r.u32(); err == nil {
			_, err = r.u32()
		}
	default:
		return invalidf("function %d uses unsupported instruction 0xfc %d", fn, sub)
	}
	return err
}

func prefixFD(r *reader, fn int) *sandbox.Error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 11 || sub == 92 || sub == 93: // v128 loads, stores, load zero
		err = memarg(r)
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		_, err = r.bytes(16)
	case sub >= 21 && sub <= 34: // extract/replace lane
		_, err = r.byte()
	case sub >= 84 && sub <= 91: // load/store lane
		if err = memarg(r); err == nil {
			_, err = r.byte()
		}
	case sub <= 255: // the rest of SIMD takes no immediates (gaps are wazero's to refuse)
	default:
		return invalidf("function %d uses unsupported instruction 0xfd %d", fn, sub)
	}
	return err
}
