package wasm

import (
	"context"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
)

func benchEngines(b *testing.B, f func(b *testing.B, cfg Config)) {
	b.Run("interpreter", func(b *testing.B) { f(b, Config{}) })
	b.Run("compiler", func(b *testing.B) { f(b, Config{Compiler: true}) })
}

// BenchmarkCalls1000 makes 1,000 sequential tool calls through the ABI per
// run; calls/s is reported.
func BenchmarkCalls1000(b *testing.B) {
	benchEngines(b, func(b *testing.B, cfg Config) {
		e := newEngine(b, cfg)
		input := `"` + strings.Repeat("x", 998) + `"` // input_len = 1,000 calls
		j := job(fixture(b, "calls_1000"), input, sandbox.Limits{})
		h := newHost()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if o := e.Execute(context.Background(), j, h); o.Err != nil || string(o.Value) != "1000" {
				b.Fatal(o.Value, o.Err)
			}
		}
		b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "calls/s")
	})
}

// BenchmarkCompile compiles a Go-sized module with no cache (every run
// compiles) and measures a run whose module is cached (no compilation).
func BenchmarkCompile(b *testing.B) {
	mod := goGuest(b)
	benchEngines(b, func(b *testing.B, cfg Config) {
		b.Run("nocache", func(b *testing.B) {
			cfg := cfg
			cfg.CacheSize = -1
			e := newEngine(b, cfg)
			for i := 0; i < b.N; i++ {
				l, err := e.acquire(context.Background(), mod, sandbox.DefaultLimits())
				if err != nil {
					b.Fatal(err)
				}
				e.release(l)
			}
		})
		b.Run("cached", func(b *testing.B) {
			e := newEngine(b, cfg)
			if _, err := e.Put(context.Background(), mod); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l, err := e.acquire(context.Background(), mod, sandbox.DefaultLimits())
				if err != nil {
					b.Fatal(err)
				}
				e.release(l)
			}
		})
	})
}

// BenchmarkRunCached runs a cached Go guest (instantiate, Go runtime start,
// one tool call).
func BenchmarkRunCached(b *testing.B) {
	mod := goGuest(b)
	benchEngines(b, func(b *testing.B, cfg Config) {
		e := newEngine(b, cfg)
		j := job(mod, `{"n":41}`, sandbox.Limits{})
		h := newHost()
		if o := e.Execute(context.Background(), j, h); o.Err != nil { // compile once
			b.Fatal(o.Err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if o := e.Execute(context.Background(), j, h); o.Err != nil {
				b.Fatal(o.Err)
			}
		}
	})
}
