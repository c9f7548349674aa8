package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// engines returns the interpreter and, where wazero supports it, the
// compiler, so that every case runs on both.
func engines(t *testing.T) map[string]*Engine {
	// Compile timeouts of a minute, a hang guard: under -race on 2 loaded
	// cores even the interpreter took over the 10 s default to compile a
	// Go guest.
	m := map[string]*Engine{"interpreter": newEngine(t, Config{CompileTimeout: time.Minute})}
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
		m["compiler"] = newEngine(t, Config{Compiler: true, CompileTimeout: time.Minute}) // -race slows compilation ten-fold
	}
	return m
}

type fixtureCase struct {
	module  string
	input   string
	limits  sandbox.Limits
	want    string       // the result's JSON when ok
	code    sandbox.Code // the error's code otherwise
	msg     string       // a substring of the error's message
	logs    []string
	wantErr func(*testing.T, *sandbox.Outcome)
	// spins: the module loops without a host call past its deadline, so
	// only an interrupt ends it (with Config.NoInterrupt, the kill of the
	// process, which the process tier's tests check).
	spins bool
}

func TestFixtures(t *testing.T) {
	// Cases that must end at their deadline get 2 s: enough for a loaded
	// machine under -race to reach the point the case checks (progress
	// stores its value first). The cases run in parallel, so the wait is
	// paid about once.
	short := sandbox.Limits{Timeout: 2 * time.Second}
	cases := []fixtureCase{
		{module: "abi_version", want: "1"},
		{module: "echo_input", input: `{"a": [1, 2], "b": "é"}`, want: `{"a":[1,2],"b":"é"}`},
		{module: "echo_input", want: `null`},
		{module: "call_tool", want: "42"},
		{module: "abi_edges", want: "0"},
		{module: "tool_error", want: `{"code":"E_TOOL_DENIED","message":"denied by policy","hint":"Ask a person.","tool":"deny","rule":"no-deny"}`},
		{module: "bad_args", wantErr: func(t *testing.T, o *sandbox.Outcome) {
			var e sandbox.Error
			if o.Err != nil || json.Unmarshal(o.Value, &e) != nil || e.Code != sandbox.EToolArgs || e.Tool != "echo" {
				t.Fatalf("got %s, %v; want an E_TOOL_ARGS error JSON", o.Value, o.Err)
			}
		}},
		{module: "handles", want: "1000"},
		{module: "fanout", want: "100"},
		{module: "calls_1000", input: `"abcdefgh"`, want: "10"},
		{module: "result_replace", want: `{"b":[2,3]}`},
		{module: "result_invalid", code: sandbox.EResultInvalid},
		{module: "result_big", code: sandbox.EOutputLimit},
		{module: "bad_utf8", code: sandbox.EResultInvalid, msg: "not valid JSON"},
		{module: "progress", limits: short, spins: true, wantErr: func(t *testing.T, o *sandbox.Outcome) {
			if o.Err == nil || o.Err.Code != sandbox.ETimeout || string(o.Partial) != `{"step":1}` {
				t.Fatalf("got %v with partial %s; want E_TIMEOUT with {\"step\":1}", o.Err, o.Partial)
			}
		}},
		{module: "wait_slow", limits: short, code: sandbox.ETimeout},
		{module: "log", want: "null", logs: []string{`hello\n\u001b[31mred\t`, "bad \uFFFD\uFFFD utf8", ""}},
		{module: "log_flood", code: sandbox.EOutputLimit},
		{module: "log_empty", limits: sandbox.Limits{MaxLogBytes: 100}, wantErr: func(t *testing.T, o *sandbox.Outcome) {
			if o.Err != nil || len(o.Logs) != 98 || o.Logs[0] != "abc" || !o.LogsTruncated {
				t.Fatalf("err %v, %d entries kept (truncated %v); want 98: \"abc\" and 97 empty ones", o.Err, len(o.Logs), o.LogsTruncated)
			}
		}},
		{module: "no_memory", want: "-2"},
		{module: "wasi_exit", code: sandbox.EGuestError, msg: "exit code 3", logs: []string{"hi", "[error] oops"}},
		{module: "wasi_ok", want: `{"ok":true}`},
		{module: "start_null", want: "null"},

		// Hostile modules: the shared red-team classes as our own cases.
		{module: "hostile_loop", limits: short, code: sandbox.ETimeout, spins: true},
		{module: "hostile_start_loop", limits: short, code: sandbox.ETimeout, spins: true},
		{module: "hostile_calltree", limits: short, code: sandbox.ETimeout, spins: true},
		{module: "hostile_grow", want: "3073"},
		{module: "hostile_grow", limits: sandbox.Limits{MemoryBytes: 1 << 20}, want: "1"},
		{module: "hostile_recursion", code: sandbox.EStack},
		{module: "hostile_oob", code: sandbox.EGuestError, msg: "out of bounds memory access"},
		{module: "hostile_table_grow", code: sandbox.EModuleLimit, msg: "table.grow"},
		{module: "hostile_table_grow_capped", want: "-1"},
		{module: "hostile_table_big", code: sandbox.EModuleLimit},
		{module: "hostile_unreachable", code: sandbox.EGuestError, msg: "unreachable"},
		{module: "hostile_div0", code: sandbox.EGuestError, msg: "integer divide by zero"},
		{module: "hostile_mem4g", code: sandbox.EModuleLimit, msg: "initial memory"},
		{module: "hostile_import_env", code: sandbox.EModuleInvalid, msg: `"env"."system"`},
		{module: "hostile_import_memory", code: sandbox.EModuleInvalid, msg: "imports a memory"},
		{module: "hostile_import_unknown", code: sandbox.EModuleInvalid, msg: `"sandcall"."exec"`},
		{module: "hostile_no_entry", code: sandbox.EModuleInvalid, msg: "neither _start nor run"},
		{module: "bomb_nesting", code: sandbox.EModuleLimit, msg: "nests blocks"},
		{module: "bomb_brtable", code: sandbox.EModuleLimit, msg: "br_table"},
	}
	es := engines(t)
	if _, ok := es["compiler"]; ok && !testing.Short() {
		// As in a worker: compiled code without interrupt checks; the
		// deadline, a cancellation or a log flood ends the guest at its
		// next host call, with the same outcome.
		es["compiler-nointerrupt"] = newEngine(t, Config{Compiler: true, NoInterrupt: true, CompileTimeout: time.Minute})
	}
	for name, e := range es {
		t.Run(name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.module, func(t *testing.T) {
					if c.spins && name == "compiler-nointerrupt" {
						t.Skip("spins without a host call: ended by the worker's kill, not the engine")
					}
					t.Parallel()
					if c.limits.Timeout == 0 {
						// A hang check, not a speed limit: on 2 loaded cores
						// under -race, hostile_grow's 192 MiB of zeroed pages
						// took over the 10 s default.
						c.limits.Timeout = sandbox.MaxTimeout
					}
					h := newHost()
					o := e.Execute(context.Background(), job(fixture(t, c.module), c.input, c.limits), h)
					checkOutcome(t, c, o)
					if c.logs != nil {
						if strings.Join(o.Logs, "|") != strings.Join(c.logs, "|") {
							t.Errorf("logs = %q, want %q", o.Logs, c.logs)
						}
						if strings.Join(h.Logs(), "|") != strings.Join(o.Logs, "|") {
							t.Errorf("streamed logs = %q, want %q", h.Logs(), o.Logs)
						}
					}
					if c.module == "fanout" && h.MaxInFlight() < 10 {
						t.Errorf("fan-out ran at most %d calls at once, want parallel calls", h.MaxInFlight())
					}
				})
			}
		})
	}
}

func checkOutcome(t *testing.T, c fixtureCase, o *sandbox.Outcome) {
	t.Helper()
	if c.wantErr != nil {
		c.wantErr(t, o)
		return
	}
	if c.code != "" {
		if o.Err == nil {
			t.Fatalf("ok with %s, want %s", o.Value, c.code)
		}
		if !errors.Is(o.Err, &sandbox.Error{Code: c.code}) {
			t.Fatalf("err = %v, want %s", o.Err, c.code)
		}
		if !strings.Contains(o.Err.Message, c.msg) {
			t.Errorf("message %q does not contain %q", o.Err.Message, c.msg)
		}
		checkClean(t, o.Err)
		return
	}
	if o.Err != nil {
		t.Fatalf("err = %v (hint %q), want ok %s", o.Err, o.Err.Hint, c.want)
	}
	if string(o.Value) != c.want {
		t.Fatalf("result = %s, want %s", o.Value, c.want)
	}
}

// checkClean fails if an error's text shows Go or host internals.
func checkClean(t *testing.T, e *sandbox.Error) {
	t.Helper()
	for _, bad := range []string{"goroutine", ".go:", "/root", "/home", "/work", "wazero", "runtime error"} {
		if strings.Contains(e.Message, bad) || strings.Contains(e.Hint, bad) {
			t.Errorf("error text contains %q: %v", bad, e)
		}
	}
}

func TestCancel(t *testing.T) {
	e := newEngine(t, Config{})
	for _, mod := range []string{"wait_slow", "hostile_loop"} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		o := e.Execute(ctx, job(fixture(t, mod), "", sandbox.Limits{}), newHost())
		if !errors.Is(o.Err, sandbox.ErrCancelled) {
			t.Fatalf("%s: err = %v, want E_CANCELLED", mod, o.Err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: cancellation took %v", mod, d)
		}
		cancel()
	}
}

func TestWrongLanguage(t *testing.T) {
	e := newEngine(t, Config{})
	o := e.Execute(context.Background(), &sandbox.Job{Program: sandbox.Program{Source: "return 1"}}, newHost())
	if !errors.Is(o.Err, sandbox.ErrInternal) {
		t.Fatalf("err = %v", o.Err)
	}
}

func TestMalformed(t *testing.T) {
	e := newEngine(t, Config{})
	valid := fixture(t, "abi_version")
	cases := map[string][]byte{
		"empty":           {},
		"garbage":         []byte("hello, world"),
		"bad magic":       []byte("\x00ASM\x01\x00\x00\x00"),
		"component":       []byte("\x00asm\x0d\x00\x01\x00"),
		"truncated":       valid[:len(valid)/2],
		"section overrun": append(append([]byte{}, valid[:8]...), 1, 0xff, 0xff, 0x03),
		"bad leb":         append(append([]byte{}, valid[:8]...), 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
		"unknown section": append(append([]byte{}, valid[:8]...), 42, 0),
		"type mismatch":   fixture(t, "type_mismatch"),
	}
	for name, mod := range cases {
		o := e.Execute(context.Background(), job(mod, "", sandbox.Limits{}), newHost())
		if !errors.Is(o.Err, sandbox.ErrModuleInvalid) {
			t.Errorf("%s: err = %v, want E_MODULE_INVALID", name, o.Err)
			continue
		}
		checkClean(t, o.Err)
	}
	big := make([]byte, 16<<20+1)
	copy(big, valid)
	if o := e.Execute(context.Background(), job(big, "", sandbox.Limits{}), newHost()); !errors.Is(o.Err, sandbox.ErrModuleLimit) {
		t.Errorf("17 MiB: err = %v, want E_MODULE_LIMIT", o.Err)
	}
}
