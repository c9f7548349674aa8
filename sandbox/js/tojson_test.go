package js

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dop251/goja"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/jsonscan"
)

// newTestRun returns a run with a set-up runtime, for converter tests.
func newTestRun(t testing.TB) *run {
	t.Helper()
	r := newRun(context.Background(), &sandbox.Job{}, sandbox.DefaultLimits(), newHost())
	r.rt = goja.New()
	if err := r.setup(nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.close)
	return r
}

// convertWithBoth converts the value of expr with the engine's converter
// and with goja's own JSON.stringify (captured before the guard).
func convertWithBoth(t testing.TB, r *run, orig goja.Callable, expr string) (ours []byte, theirs string, undef bool, err *sandbox.Error) {
	v, rerr := r.rt.RunString("(" + expr + ")")
	if rerr != nil {
		t.Fatalf("%s: %v", expr, rerr)
	}
	s, serr := orig(goja.Undefined(), v)
	if serr != nil {
		t.Fatalf("%s: stringify: %v", expr, serr)
	}
	ours, err = r.encoder(modeResult, 1<<20).encode(v)
	return ours, s.String(), goja.IsUndefined(s), err
}

func TestToJSONMatchesStringify(t *testing.T) {
	r := newTestRun(t)
	orig := r.origStringify
	for _, expr := range []string{
		`null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `1.5`, `0.1 + 0.2`, `1e21`, `1e-7`, `123e-20`, `-1e-7`,
		`2 ** 53`, `2 ** 53 + 2`, `-(2 ** 31)`, `Number.MAX_VALUE`, `Number.MIN_VALUE`, `NaN`, `Infinity`, `-Infinity`,
		`1e20`, `123456789.123456789`, `5e-324`, `0.000001`, `0.0000001`,
		`""`, `"abc"`, `"\u0000\u0001\u001f\u007f"`, `"\b\f\n\r\t\"\\/"`, `"é€😀"`, `"\ud800"`, `"\udc00x"`,
		`"a\ud83d\ude00b\ud83d"`, `"\u2028\u2029"`, `"<script>&'"`,
		`[]`, `{}`, `[1, "a", null, true]`, `[undefined, function(){}, Symbol("s")]`,
		`{a: undefined, b: function(){}, c: Symbol("x"), d: 1}`,
		`{z: 1, a: 2, 10: 3, 2: 4, b: {y: [1, {x: 2}]}}`,
		`{"__proto__": 1}`, `JSON.parse('{"__proto__": {"x": 1}}')`,
		`new Date(0)`, `new Date(NaN)`, `{d: new Date(Date.UTC(2024, 1, 29, 23, 59, 59, 999))}`,
		`new Date(-1e14)`, `new Date(2.5e14)`,
		`new Error("x")`, `new Map([[1, 2]])`, `new Set([1])`, `/re/g`,
		`[,1,,2]`, `Object.assign(Object.create({inherited: 1}), {own: 2})`,
		`Object.defineProperty({a: 1}, "hidden", {value: 2, enumerable: false})`,
		`new Uint8Array([1, 2, 3])`, `{s: Symbol.iterator, [Symbol("k")]: 1, n: 2}`,
		`(function(){ return arguments })(1, 2)`,
		`[[[[[[[[[[1]]]]]]]]]]`, `{"": "", " ": " "}`, `{"é": 1, "\n": 2}`,
	} {
		ours, theirs, undef, err := convertWithBoth(t, r, orig, expr)
		if err != nil {
			t.Errorf("%s: converter error %v", expr, err)
			continue
		}
		if undef {
			if ours != nil {
				t.Errorf("%s: ours %s, JSON.stringify undefined", expr, ours)
			}
			continue
		}
		if string(ours) != theirs {
			t.Errorf("%s:\n ours   %s\n theirs %s", expr, ours, theirs)
		}
	}
}

func TestToJSONRefuses(t *testing.T) {
	r := newTestRun(t)
	for _, tc := range []struct {
		expr string
		code sandbox.Code
	}{
		{`{get a() { return 1 }}`, sandbox.EResultInvalid},
		{`new Proxy({}, {})`, sandbox.EResultInvalid},
		{`[new Proxy([], {})]`, sandbox.EResultInvalid},
		{`(() => { const a = {}; a.a = a; return a })()`, sandbox.EResultInvalid},
		{`10n`, sandbox.EResultInvalid},
		{`"x".repeat(2 << 20)`, sandbox.EOutputLimit},
		{`new Array(3 << 20)`, sandbox.EOutputLimit},
	} {
		v, err := r.rt.RunString("(" + tc.expr + ")")
		if err != nil {
			t.Fatal(err)
		}
		_, serr := r.encoder(modeResult, 1<<20).encode(v)
		if serr == nil || serr.Code != tc.code {
			t.Errorf("%s: got %v, want %s", tc.expr, serr, tc.code)
		}
	}
	// Arguments: a getter is E_TOOL_ARGS with a JSON pointer.
	v, _ := r.rt.RunString(`({a: [0, {get "b/c"() { return 1 }}]})`)
	_, serr := r.encoder(modeArgs, 1<<20).encode(v)
	if serr == nil || serr.Code != sandbox.EToolArgs || serr.Path != "/a/1/b~1c" {
		t.Errorf("getter in args: got %+v", serr)
	}
}

func TestBuildValueRoundTrip(t *testing.T) {
	r := newTestRun(t)
	for _, in := range []string{
		`null`, `true`, `[1,2.5,-3,1e+21,1e-7,"x"]`, `{"b":1,"a":{"c":[]},"__proto__":2}`,
		`"\u0000\n\"\\é😀"`, `{"k\u00e9y":"v"}`, `[[[[]]]]`, `123456789012345678901234`, `{"a":1,"a":2}`,
	} {
		v, err := r.buildValue([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got, _ := r.encoder(modeResult, 1<<20).encode(v)
		want, _ := r.origStringify(goja.Undefined(), mustParse(t, r, in))
		if string(got) != want.String() {
			t.Errorf("%s: built %s, JSON.parse gives %s", in, got, want)
		}
	}
	// Lone surrogates survive (goja's JSON.parse replaces them).
	v, _ := r.buildValue([]byte(`["\udc00","\ud83d\ude00"]`))
	if got, _ := r.encoder(modeResult, 1<<20).encode(v); string(got) != `["\udc00","😀"]` {
		t.Errorf("lone surrogate: %s", got)
	}
	for _, bad := range []string{``, `{`, `[1,]`, `{"a"}`, `tru`, `01`, `"\x"`, `1 2`, `"abc`, "\"\x01\""} {
		if _, err := r.buildValue([]byte(bad)); err == nil || err.Code != sandbox.EToolFailed {
			t.Errorf("%q: got %v, want E_TOOL_FAILED", bad, err)
		}
	}
}

func mustParse(t testing.TB, r *run, s string) goja.Value {
	p, _ := goja.AssertFunction(r.rt.Get("JSON").(*goja.Object).Get("parse"))
	v, err := p(goja.Undefined(), r.rt.ToValue(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// FuzzToJSON feeds JSON-ish documents through the builder and the
// converter and checks the converter agrees with JSON.stringify and emits
// valid JSON.
func FuzzToJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null]}`, `"\ud800"`, `[1e21,-0,0.1]`, `{"__proto__":{"z":1}}`, `[[[[[]]]]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := newTestRun(t)
		v, err := r.buildValue([]byte(s))
		if err != nil {
			if json.Valid([]byte(s)) && len(s) < 1<<16 && jsonscan.Depth(s) < maxBuildDepth {
				t.Fatalf("valid JSON refused: %q: %v", s, err)
			}
			return
		}
		got, serr := r.encoder(modeResult, 1<<20).encode(v)
		if serr != nil {
			return // depth or size bound
		}
		want, gerr := r.origStringify(goja.Undefined(), v)
		if gerr != nil {
			t.Fatal(gerr)
		}
		if string(got) != want.String() {
			t.Fatalf("%q: ours %s, JSON.stringify %s", s, got, want)
		}
		if !json.Valid(got) {
			t.Fatalf("invalid JSON out: %s", got)
		}
	})
}
