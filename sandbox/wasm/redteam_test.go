package wasm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// TestRedteam runs the shared hostile sample (../shared/redteam/wasm) with
// the expectations of its README: "ok" or one of the codes listed.
func TestRedteam(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "redteam", "wasm")
	files, _ := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if len(files) == 0 {
		t.Skip("the shared red-team sample is not present (../shared/redteam/wasm)")
	}
	expect := map[string][]string{
		"w01_loop":            {"E_TIMEOUT"},
		"w02_grow":            {"ok", "E_MEMORY"},
		"w04_recursion":       {"E_STACK", "E_GUEST_ERROR"},
		"w06_oob":             {"E_GUEST_ERROR"},
		"w10_table_grow":      {"E_MEMORY", "E_MODULE_LIMIT"},
		"w12_unreachable":     {"E_GUEST_ERROR"},
		"w13_div0":            {"E_GUEST_ERROR"},
		"w14_memory_init_max": {"E_MODULE_LIMIT", "E_MODULE_INVALID"},
	}
	for name, e := range engines(t) {
		for _, f := range files {
			base := strings.TrimSuffix(filepath.Base(f), ".wasm")
			t.Run(name+"/"+base, func(t *testing.T) {
				want, ok := expect[base]
				if !ok {
					t.Skipf("no expectation recorded for %s", base)
				}
				mod, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				// Cases that must time out get 1 s; the others the longest
				// deadline, a hang check only: on 2 loaded cores under
				// -race, w02_grow's zeroed pages took over the 10 s default.
				l := sandbox.Limits{Timeout: sandbox.MaxTimeout}
				if want[0] == "E_TIMEOUT" {
					l.Timeout = time.Second
				}
				o := e.Execute(context.Background(), job(mod, "", l), newHost())
				got := "ok"
				if o.Err != nil {
					got = string(o.Err.Code)
					checkClean(t, o.Err)
				}
				found := false
				for _, w := range want {
					found = found || w == got
				}
				if !found {
					t.Errorf("got %s (%v), want one of %v", got, o.Err, want)
				}
				if d := time.Since(start); d > l.Timeout+10*time.Second {
					t.Errorf("took %v", d)
				}
				t.Logf("%s: %s %s %v", base, got, o.Value, o.Err)
			})
		}
	}
}

// TestPutHas covers the module store that run_code's module_sha256 uses,
// and the cache: a second run skips compilation.
func TestPutHas(t *testing.T) {
	e := newEngine(t, Config{CacheSize: 2})
	mod := fixture(t, "call_tool")
	sha, serr := e.Put(context.Background(), mod)
	if serr != nil || sha != Hash(mod) || !e.Has(sha) {
		t.Fatalf("Put = %q, %v; Has = %v", sha, serr, e.Has(sha))
	}
	if b, ok := e.Module(sha); !ok || string(b) != string(mod) {
		t.Fatal("Module does not return the bytes")
	}
	if _, serr := e.Put(context.Background(), fixture(t, "hostile_mem4g")); !errors.Is(serr, sandbox.ErrModuleLimit) {
		t.Fatalf("Put of a hostile module = %v", serr)
	}
	// Two more modules evict the first (CacheSize 2).
	for _, m := range []string{"abi_version", "echo_input"} {
		if _, serr := e.Put(context.Background(), fixture(t, m)); serr != nil {
			t.Fatal(serr)
		}
	}
	if e.Has(sha) {
		t.Error("the least recently used module was not evicted")
	}
	// Runs still work after eviction, and concurrently.
	done := make(chan *sandbox.Outcome)
	for i := 0; i < 8; i++ {
		go func() { done <- e.Execute(context.Background(), job(mod, "", sandbox.Limits{}), newHost()) }()
	}
	for i := 0; i < 8; i++ {
		if o := <-done; o.Err != nil || string(o.Value) != "42" {
			t.Fatalf("run: %s, %v", o.Value, o.Err)
		}
	}
}

func TestCacheDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	e := newEngine(t, Config{Compiler: true, CacheDir: dir})
	if o := e.Execute(context.Background(), job(fixture(t, "call_tool"), "", sandbox.Limits{}), newHost()); o.Err != nil {
		t.Fatal(o.Err)
	}
	// A second engine (a new worker) reads the compiled code from disk.
	e2 := newEngine(t, Config{Compiler: true, CacheDir: dir})
	if o := e2.Execute(context.Background(), job(fixture(t, "call_tool"), "", sandbox.Limits{}), newHost()); o.Err != nil || string(o.Value) != "42" {
		t.Fatal(o.Err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Compiler: true, CacheDir: dir}); err == nil {
		t.Error("a world-writable cache dir was accepted")
	}
}
