package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/sandcall/sandcall/examples/expense"
)

// buildFlags are the flags of the documented build command; -s -w drop
// the symbol table and DWARF (about 70 KB of 3.4 MB).
var buildFlags = []string{"build", "-trimpath", "-ldflags=-s -w"}

var built struct {
	once sync.Once
	dir  string
	wasm []byte
	skip string // why the module could not be built here, if the environment is at fault
	err  error  // a build failure that is the code's fault
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// module returns the committed build of the program (expense.ModuleGo),
// which TestModuleGoMatchesSource checks against the source.
func module(testing.TB) []byte { return expense.ModuleGo() }

// build builds the program with the installed Go, once per test binary:
// GOOS=wasip1 GOARCH=wasm go build -trimpath -ldflags='-s -w'.
func build(t testing.TB) []byte {
	t.Helper()
	built.once.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			built.skip = "no go command on PATH to build the module: " + err.Error()
			return
		}
		dir, err := os.MkdirTemp("", "expense-wasm-")
		if err != nil {
			built.skip = err.Error()
			return
		}
		built.dir = dir
		out := filepath.Join(dir, "expense.wasm")
		cmd := exec.Command(gobin, append(buildFlags, "-o", out, ".")...)
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			msg := fmt.Sprintf("GOOS=wasip1 GOARCH=wasm go build: %v\n%s", err, stderr.Bytes())
			// A compile error names one of our files; anything else (no
			// wasip1 port, an unwritable cache, ...) is the environment's.
			if strings.Contains(stderr.String(), ".go:") {
				built.err = errors.New(msg)
			} else {
				built.skip = msg
			}
			return
		}
		built.wasm, built.err = os.ReadFile(out)
	})
	if built.skip != "" {
		t.Skip("cannot build the module in this environment: " + built.skip)
	}
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.wasm
}

// goVersionRE finds the Go release a module was built with.
var goVersionRE = regexp.MustCompile(`go1\.[0-9]+(\.[0-9]+)?`)

// TestModuleGoMatchesSource builds the program and compares it with the
// committed module (expense.ModuleGo), when the installed Go is the release
// that built it (another release links another runtime).
func TestModuleGoMatchesSource(t *testing.T) {
	committed := module(t)
	if v := goVersionRE.Find(committed); string(v) != runtime.Version() {
		t.Skipf("skipped: the committed module was built with %s, this is %s: go generate ./examples/expense rebuilds it", v, runtime.Version())
	}
	if b := build(t); !bytes.Equal(b, committed) {
		t.Errorf("wasm/expense.wasm.gz (%d bytes) is not the build of this package (%d bytes): run go generate ./examples/expense", len(committed), len(b))
	}
}

// abiImports are the functions of the sandcall host module (bindings/abi.md,
// version 1) and their numbers of i32 parameters and results.
var abiImports = map[string][2]int{
	"abi_version": {0, 1},
	"call":        {4, 1},
	"call_async":  {4, 1},
	"wait":        {1, 1},
	"result_len":  {1, 1},
	"result_read": {3, 1},
	"input_len":   {0, 1},
	"input_read":  {2, 1},
	"set_result":  {2, 1},
	"log":         {2, 0},
}

// TestModule checks the module as the engine's pre-validator will see it:
// a WebAssembly 1 binary whose imports are functions of sandcall (with the
// ABI's signatures) and WASI only, exporting _start and memory.
func TestModule(t *testing.T) {
	wasm := module(t)
	t.Logf("expense.wasm: %d bytes (go %s)", len(wasm), strings.Join(buildFlags, " "))
	if len(wasm) > 16<<20 {
		t.Errorf("module is %d bytes, over the default MaxModuleBytes (16 MiB)", len(wasm))
	}
	m, err := parseModule(wasm)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, im := range m.imports {
		switch {
		case im.kind != kindFunc:
			t.Errorf("import %s.%s is of kind %d; the ABI allows functions only", im.module, im.name, im.kind)
		case im.module == "wasi_snapshot_preview1":
		case im.module == "sandcall":
			want, ok := abiImports[im.name]
			if !ok {
				t.Errorf("import sandcall.%s is not in the ABI", im.name)
				continue
			}
			used[im.name] = true
			sig := m.types[im.index]
			if len(sig.params) != want[0] || len(sig.results) != want[1] || !allI32(sig.params) || !allI32(sig.results) {
				t.Errorf("sandcall.%s has signature %v -> %v; want %d i32 -> %d i32", im.name, sig.params, sig.results, want[0], want[1])
			}
		default:
			t.Errorf("import %s.%s: only sandcall and wasi_snapshot_preview1 are allowed", im.module, im.name)
		}
	}
	// What the expense program needs: a blocking call, the fan-out, the result.
	for _, name := range []string{"abi_version", "call", "call_async", "wait", "result_len", "result_read", "set_result"} {
		if !used[name] {
			t.Errorf("the module does not import sandcall.%s", name)
		}
	}
	if k, ok := m.exports["_start"]; !ok || k != kindFunc {
		t.Errorf("no exported function _start (exports %v)", m.exports)
	}
	if k, ok := m.exports["memory"]; !ok || k != kindMemory {
		t.Errorf("no exported memory (exports %v)", m.exports)
	}
}

func allI32(ts []byte) bool {
	for _, t := range ts {
		if t != 0x7f {
			return false
		}
	}
	return true
}

// A tiny reader of the parts of a WebAssembly binary the test checks: the
// type, import and export sections.

const (
	kindFunc   = 0
	kindTable  = 1
	kindMemory = 2
	kindGlobal = 3
)

type funcType struct{ params, results []byte }

type wasmImport struct {
	module, name string
	kind         byte
	index        uint32 // type index, for a function
}

type wasmModule struct {
	types   []funcType
	imports []wasmImport
	exports map[string]byte // name → kind
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail("unexpected end")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.fail("LEB128 too long")
	return 0
}

func (r *reader) bytes(n uint32) []byte {
	if uint64(n) > uint64(len(r.b)) {
		r.fail("length %d past the end", n)
		r.b = nil
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) name() string { return string(r.bytes(r.u32())) }

func (r *reader) limits() {
	if r.byte()&1 != 0 {
		r.u32()
	}
	r.u32()
}

func parseModule(b []byte) (*wasmModule, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, errors.New("no WebAssembly magic")
	}
	if v := b[4:8]; string(v) != "\x01\x00\x00\x00" {
		return nil, fmt.Errorf("version %x, want 1", v)
	}
	m := &wasmModule{exports: map[string]byte{}}
	r := &reader{b: b[8:]}
	for len(r.b) > 0 && r.err == nil {
		id := r.byte()
		s := &reader{b: r.bytes(r.u32())}
		switch id {
		case 1: // type
			for n := s.u32(); n > 0 && s.err == nil; n-- {
				if f := s.byte(); f != 0x60 {
					s.fail("type form %#x", f)
				}
				params := s.bytes(s.u32())
				results := s.bytes(s.u32())
				m.types = append(m.types, funcType{params, results})
			}
		case 2: // import
			for n := s.u32(); n > 0 && s.err == nil; n-- {
				im := wasmImport{module: s.name(), name: s.name(), kind: s.byte()}
				switch im.kind {
				case kindFunc:
					im.index = s.u32()
					if int(im.index) >= len(m.types) {
						s.fail("import %s.%s: type %d of %d", im.module, im.name, im.index, len(m.types))
					}
				case kindTable:
					s.byte()
					s.limits()
				case kindMemory:
					s.limits()
				case kindGlobal:
					s.byte()
					s.byte()
				default:
					s.fail("import kind %d", im.kind)
				}
				m.imports = append(m.imports, im)
			}
		case 7: // export
			for n := s.u32(); n > 0 && s.err == nil; n-- {
				name, kind := s.name(), s.byte()
				s.u32()
				m.exports[name] = kind
			}
		}
		if s.err != nil {
			return nil, fmt.Errorf("section %d: %w", id, s.err)
		}
	}
	return m, r.err
}

func TestParseModuleRejects(t *testing.T) {
	for name, b := range map[string]string{
		"empty":     "",
		"magic":     "\x00ASM\x01\x00\x00\x00",
		"version":   "\x00asm\x02\x00\x00\x00",
		"truncated": "\x00asm\x01\x00\x00\x00\x02\x05\x01",
		"bad type":  "\x00asm\x01\x00\x00\x00\x02\x0b\x01\x01a\x01b\x00\x05", // function type 5 of 0
	} {
		if _, err := parseModule([]byte(b)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
