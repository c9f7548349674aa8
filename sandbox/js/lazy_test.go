package js

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/jsonscan"
)

// runLazy runs src with input and the test tools and returns the outcome.
func runLazy(t *testing.T, src, input string) *sandbox.Outcome {
	t.Helper()
	job := &sandbox.Job{
		Program: sandbox.Program{Source: src, Input: []byte(input)},
		Limits:  sandbox.DefaultLimits(),
		Tools:   testTools,
	}
	return New(Config{}).Execute(context.Background(), job, newHost())
}

// TestLazySemantics checks that tool results (lazy wrappers) behave like
// the plain values JSON.parse would give, for each operation a program
// may use on them.
func TestLazySemantics(t *testing.T) {
	for _, tc := range []struct {
		name, src, input, want string
	}{
		{"identity", `const r = await tools.echo({a: {b: 1}, l: [{x: 1}]});
			return [r.a === r.a, r.l === r.l, r.l[0] === r.l[0], r.a.b, typeof r, typeof r.l]`,
			"", `[true,true,true,1,"object","object"]`},
		{"independent calls", `const a = await tools.get_team_members({department: "x"});
			const b = await tools.get_team_members({department: "x"});
			a[0].name = "X";
			return [a === b, a[0] === b[0], b[0].name !== "X", a[0].name]`,
			"", `[false,false,true,"X"]`},
		{"object set and delete", `const r = await tools.echo({a: 1, b: 2});
			r.c = 3; r.a = 10; delete r.b; delete r.nothing;
			return [Object.keys(r), r, "b" in r, "c" in r, r.hasOwnProperty("c"), Object.hasOwn(r, "b")]`,
			"", `[["a","c"],{"a":10,"c":3},false,true,true,false]`},
		{"members survive copy-on-write", `const r = await tools.echo({o: {x: 1}, p: [1], q: 2});
			const o = r.o, p = r.p; r.z = 1; delete r.q;
			return [r.o === o, r.p === p, o.x, Object.keys(r)]`,
			"", `[true,true,1,["o","p","z"]]`},
		{"key order like JSON.parse", `const text = ` + "`" + `{"b":1,"2":2,"1":3,"a":4,"b":5}` + "`" + `;
			const p = JSON.parse(text);
			return [Object.keys(input), input.b, JSON.stringify(input) === JSON.stringify(p), Object.keys(input).join() === Object.keys(p).join(), input]`,
			`{"b":1,"2":2,"1":3,"a":4,"b":5}`, `[["1","2","b","a"],5,true,true,{"1":3,"2":2,"b":5,"a":4}]`},
		{"keys added like a plain object", `const p = JSON.parse(JSON.stringify(input));
			for (const o of [input, p]) { o.x = 1; o[0] = 9; o[7] = 1; o.a = 3; delete o[1]; o[1] = 2; o.y = 1; delete o.x; o.x = 0 }
			return [Object.keys(input).join() === Object.keys(p).join(), Object.keys(input), JSON.stringify(input) === JSON.stringify(p)]`,
			`{"1":1,"a":2}`, `[true,["0","1","7","a","y","x"],true]`},
		{"many keys", `const p = JSON.parse(JSON.stringify(input));
			for (const o of [input, p]) { for (let i = 0; i < 40; i++) o["k" + (i % 30)] = i; for (let i = 0; i < 40; i += 3) delete o["k" + i]; o[3] = 1 }
			return [JSON.stringify(input) === JSON.stringify(p), Object.keys(input).length, input.k29, "k3" in input]`,
			`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"r":18}`,
			`[true,39,29,false]`},
		{"non-canonical text", `return [input, JSON.stringify(input)]`,
			`{"a":1.0,"b":"\u0041\/\u00e9","c":[1e2,-0,1E-7, 0.10],"d" : true}`,
			`[{"a":1,"b":"A/é","c":[100,0,1e-7,0.1],"d":true},"{\"a\":1,\"b\":\"A/é\",\"c\":[100,0,1e-7,0.1],\"d\":true}"]`},
		{"__proto__ key", `return [input.x, Object.keys(input), Object.getPrototypeOf(input) === Object.prototype, input]`,
			`{"__proto__":{"x":1}}`, `[null,["__proto__"],true,{"__proto__":{"x":1}}]`},
		{"array methods", `const a = await tools.echo([3, 1, 2]);
			a.push(4); a.sort(); const b = await tools.echo([1, 2, 3, 4, 5]);
			b.splice(1, 2, "x"); b.reverse(); const c = await tools.echo([1, 2, 3]); c.shift(); c.pop(); c.unshift(0);
			const d = await tools.echo([1, 2, 3]); d.length = 1;
			return [a, a.length, Array.isArray(a), b, c, d, a instanceof Array]`,
			"", `[[1,2,3,4],4,true,[5,4,"x",1],[0,2],[1],true]`},
		{"array sort keeps element identity", `const rows = await tools.get_expenses({member_id: "ENG-001", quarter: "Q3"});
			const first = rows[0]; rows.sort((x, y) => x.amount - y.amount);
			return [rows.includes(first), rows.length, rows[0].amount <= rows[1].amount]`,
			"", `[true,40,true]`},
		{"iteration", `const r = await tools.echo({a: 1, b: [1, 2]});
			const keys = []; for (const k in r) keys.push(k);
			const vals = []; for (const v of r.b) vals.push(v);
			return [keys, vals, Object.entries(r), {...r, c: 3}, [...r.b, 3], Object.values(r).length, r.b.map((x) => x * 2)]`,
			"", `[["a","b"],[1,2],[["a",1],["b",[1,2]]],{"a":1,"b":[1,2],"c":3},[1,2,3],2,[2,4]]`},
		{"descriptors", `const r = await tools.echo({a: 1, l: [1]});
			return [Object.getOwnPropertyDescriptor(r, "a"), Object.getOwnPropertyDescriptor(r.l, "0"),
				Object.getOwnPropertyDescriptor(r.l, "length").writable, Object.getOwnPropertyNames(r.l)]`,
			"", `[{"value":1,"writable":true,"enumerable":true,"configurable":true},{"value":1,"writable":true,"enumerable":true,"configurable":true},true,["0","length"]]`},
		{"defineProperty with a plain data descriptor", `const r = await tools.echo({a: 1});
			Object.defineProperty(r, "b", {value: 2, writable: true, enumerable: true, configurable: true});
			return r`, "", `{"a":1,"b":2}`},
		{"stringify", `const r = await tools.echo({a: [1, {b: "x"}], n: null});
			const s1 = JSON.stringify(r); const s2 = JSON.stringify(r, null, 1); r.a[1].b = "y";
			return [s1, s2, JSON.stringify(r), JSON.stringify(r, (k, v) => (k === "b" ? 1 : v))]`,
			"", `["{\"a\":[1,{\"b\":\"x\"}],\"n\":null}","{\n \"a\": [\n  1,\n  {\n   \"b\": \"x\"\n  }\n ],\n \"n\": null\n}","{\"a\":[1,{\"b\":\"y\"}],\"n\":null}","{\"a\":[1,{\"b\":1}],\"n\":null}"]`},
		{"stringify sees a toJSON on the prototypes", `const r = await tools.echo({a: {b: 1}, l: [1]});
			const before = JSON.stringify(r);
			Object.setPrototypeOf(r.a, {toJSON() { return 7 }});
			const nested = JSON.stringify(r);
			Array.prototype.toJSON = function () { return "arr" };
			const arr = JSON.stringify({l: r.l});
			delete Array.prototype.toJSON;
			Object.prototype.toJSON = function () { return "T" };
			return [before, nested, arr, JSON.stringify(r)]`,
			"", `["{\"a\":{\"b\":1},\"l\":[1]}","{\"a\":7,\"l\":[1]}","{\"l\":\"arr\"}","\"T\""]`},
		{"args from lazy values", `const team = await tools.get_team_members({department: "x"});
			const e = await tools.echo({m: team[0], all: team});
			const same = JSON.stringify(e.all) === JSON.stringify(team) && e.m.id === team[0].id;
			team[1].name = "Z"; const e2 = await tools.echo(team[1]); const e3 = await tools.echo({t: team});
			return [same, e2.name, e3.t[1].name, e3.t[2].name === team[2].name]`,
			"", `[true,"Z","Z",true]`},
		{"result returned unchanged", `return await tools.echo({a: [1, "é", {b: null}], c: 1.5})`,
			"", `{"a":[1,"é",{"b":null}],"c":1.5}`},
		{"result returned modified", `const r = await tools.echo({a: [1, 2], c: {d: 1}});
			r.a.push(3); r.c.e = 2; return r`, "", `{"a":[1,2,3],"c":{"d":1,"e":2}}`},
		{"guest values inside lazy ones", `const r = await tools.echo({a: 1});
			r.x = {get g() { return 1 }}; try { await tools.echo(r) } catch (e) { return [e.code, e.path] }`,
			"", `["E_TOOL_ARGS","/x/g"]`},
		{"prototype setters run for new keys", `let seen = 0;
			Object.defineProperty(Object.prototype, "hook", {set(v) { seen = v }, configurable: true});
			const r = await tools.echo({a: 1}); r.hook = 5; delete Object.prototype.hook;
			return [seen, Object.keys(r)]`, "", `[5,["a"]]`},
		{"console", `console.log(await tools.echo({a: [1, {b: 2}]})); return 1`, "", `1`},
		{"thrown lazy value", `try { throw await tools.echo({a: 1}) } catch (e) { return e.a }`, "", `1`},
		{"nested arrays and objects from the host", `const rows = await tools.get_expenses({member_id: "ENG-002", quarter: "Q3"});
			let t = 0; for (const e of rows) if (e.category === "travel") t += e.amount;
			return [rows.length, Object.keys(rows[0]), typeof t]`,
			"", `[40,["date","category","amount","description"],"number"]`},
		// Documented differences (doc.go, "Tool results").
		{"freeze, seal and preventExtensions throw", `const r = await tools.echo({a: 1, l: [1]});
			const out = [];
			for (const f of [Object.freeze, Object.seal, Object.preventExtensions]) {
				try { f(r); out.push("ok") } catch (e) { out.push(e instanceof TypeError) }
				try { f(r.l); out.push("ok") } catch (e) { out.push(e instanceof TypeError) }
			}
			out.push(Object.isFrozen(r), Object.isExtensible(r), Reflect.preventExtensions(r));
			r.b = 2; out.push(r.b);
			return out`, "", `[true,true,true,true,true,true,false,true,false,2]`},
		{"accessors and read-only properties throw", `const r = await tools.echo({a: 1});
			const out = [];
			try { Object.defineProperty(r, "g", {get() { return 1 }}); out.push("ok") } catch (e) { out.push(e instanceof TypeError) }
			try { Object.defineProperty(r, "a", {value: 2, writable: false}); out.push("ok") } catch (e) { out.push(e instanceof TypeError) }
			try { r[Symbol.iterator] = 1; out.push(r[Symbol.iterator]) } catch (e) { out.push(e instanceof TypeError) }
			return out`, "", `[true,true,null]`},
		{"array delete leaves undefined, not a hole", `const a = await tools.echo([1, 2, 3]);
			delete a[0]; return [0 in a, a[0] === undefined, a.length, a]`, "", `[true,true,3,[null,2,3]]`},
		{"arrays have no named properties", `const a = await tools.echo([1]);
			a.foo = 1; let strict; try { (() => { "use strict"; a.bar = 1 })(); strict = "ok" } catch (e) { strict = e instanceof TypeError }
			return [a.foo === undefined, strict]`, "", `[true,true]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runLazy(t, tc.src, tc.input)
			checkOutcome(t, out, "ok", tc.want)
		})
	}
}

func TestLazyErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"cycle", `const r = await tools.echo({a: 1}); r.self = r; return r`, "E_RESULT_INVALID"},
		{"cycle through an array", `const r = await tools.echo([1]); r.push(r); return r`, "E_RESULT_INVALID"},
		{"growing an array past memory", `const a = await tools.echo([1]); a[1e9] = 1; return a.length`, "E_MEMORY"},
		{"length past memory", `const a = await tools.echo([1]); a.length = 2 ** 31; return a.length`, "E_MEMORY"},
		{"result over the limit", `return await tools.get_expenses({member_id: "ENG-001", quarter: "Q3"})`, "E_OUTPUT_LIMIT"},
		{"args too deep", `const d = await tools.echo(JSON.parse("[".repeat(60) + "]".repeat(60)));
			await tools.echo({a: {b: {c: {d: {e: d}}}}})`, "E_TOOL_ARGS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &sandbox.Job{Program: sandbox.Program{Source: tc.src}, Limits: sandbox.DefaultLimits(), Tools: testTools}
			job.Limits.MaxResultBytes = 4096
			out := New(Config{}).Execute(context.Background(), job, newHost())
			checkOutcome(t, out, tc.want, "")
		})
	}
}

// TestLazyRawResult checks that an unchanged result is its host bytes.
func TestLazyRawResult(t *testing.T) {
	expenseData()
	out := runLazy(t, `return await tools.get_expenses({member_id: "ENG-003", quarter: "Q3"})`, "")
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	if string(out.Value) != string(expensesJSON["ENG-003"]) {
		t.Fatalf("result differs from the host's bytes")
	}
}

// TestLazyCanonicalFlag checks the parser's canonical flag against
// JSON.stringify: whenever it claims a document is canonical, goja's own
// JSON.parse + JSON.stringify give the same bytes.
func TestLazyCanonicalFlag(t *testing.T) {
	r := newTestRun(t)
	for _, s := range []string{
		`{"a":1}`, `{"a":1.5,"b":[0.000001,123456789012345,-1]}`, `"\u001f\n\"\\"`, `"\u001F"`, `"é"`,
		`[1.10]`, `[1e3]`, `[-0]`, `[0.0000001]`, `[1234567890123456]`, `{"1":1}`, `{"a":1,"a":2}`, `"\/"`,
		`[ 1]`, `{"a" :1}`, `"\u00e9"`, `"\ud800"`, `[true,false,null]`, `{"k\u00e9":1}`,
	} {
		d, err := (*run)(nil).parseDoc([]byte(s))
		if err != nil {
			t.Fatal(s, err)
		}
		canon := d.nodes[0].flags&fCanon != 0
		got, gerr := r.origStringify(nil, mustParse(t, r, s))
		if gerr != nil {
			t.Fatal(gerr)
		}
		if canon && got.String() != s {
			t.Errorf("%s: marked canonical, JSON.stringify gives %s", s, got)
		}
		if !canon && got.String() == s && !strings.Contains(s, `\ud800`) {
			t.Logf("%s: canonical but not marked (allowed, slower)", s)
		}
	}
}

// FuzzLazyParse checks the parser against encoding/json (validity) and the
// canonical flag against JSON.stringify.
func FuzzLazyParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null]}`, `"\ud800"`, `[1e21,-0,0.1]`, `{"__proto__":{"z":1}}`, `[[[[[]]]]]`,
		`{"b":1,"2":2,"1":3,"b":5}`, `"\u001f"`, `[0.000001,1.5]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := (*run)(nil).parseDoc([]byte(s))
		valid := json.Valid([]byte(s))
		if err != nil {
			if valid && jsonscan.Depth(s) < maxBuildDepth {
				t.Fatalf("valid JSON refused: %q: %v", s, err)
			}
			return
		}
		if !valid {
			t.Fatalf("invalid JSON accepted: %q", s)
		}
		if d.nodes[0].flags&fCanon == 0 {
			return
		}
		r := newTestRun(t)
		want, gerr := r.origStringify(nil, mustParse(t, r, s))
		if gerr != nil {
			t.Fatal(gerr)
		}
		if raw := s[d.nodes[0].start:d.nodes[0].end]; want.String() != raw {
			t.Fatalf("%q marked canonical, JSON.stringify gives %q", raw, want)
		}
	})
}

// TestLazyDifferential applies the same pseudo-random mutations to a tool
// result and to a plain copy of it (JSON.parse), and checks after each
// step that both serialize and enumerate alike, then that the run's result
// (the converter) matches too.
func TestLazyDifferential(t *testing.T) {
	const src = `
const seedDoc = {a: [1, 2, {b: [3, 4], "5": "x"}], c: {d: {e: [], f: {}}, "2": null}, g: "s", h: [[1], [2, [3]]]};
const lazy = await tools.echo(seedDoc);
const plain = JSON.parse(JSON.stringify(lazy));
let s = SEED;
const rnd = (n) => { s = (s * 1103515245 + 12345) % 2147483648; return Math.floor(s / 65536) % n };
const targets = (root) => { const out = []; (function walk(v, path) {
  if (v && typeof v === "object") { out.push(path); for (const k of Object.keys(v)) walk(v[k], path.concat([k])) } })(root, []); return out };
const at = (root, path) => { let v = root; for (const k of path) v = v[k]; return v };
for (let i = 0; i < 80; i++) {
  const ts = targets(plain);
  const path = ts[rnd(ts.length)];
  const op = rnd(12), key = ["a", "b", "0", "1", "7", "x", "10"][rnd(7)], pos = rnd(4), len = rnd(5);
  const val = [1, "s", null, {n: rnd(5)}, [rnd(3)], 2.5][rnd(6)];
  for (const root of [lazy, plain]) {
    const t = at(root, path);
    const v = JSON.parse(JSON.stringify(val));
    if (Array.isArray(t)) {
      switch (op % 8) {
        case 0: t.push(v); break;
        case 1: t.pop(); break;
        case 2: t.splice(pos, 1, v); break;
        case 3: t.sort(); break;
        case 4: t.length = Math.min(len, t.length); break; // no holes: lazy arrays are dense (documented)
        case 5: t.unshift(v); break;
        case 6: t.reverse(); break;
        case 7: if (t.length) t[pos % t.length] = v; break;
      }
    } else {
      switch (op % 4) {
        case 0: t[key] = v; break;
        case 1: delete t[key]; break;
        case 2: Object.assign(t, {[key]: v}); break;
        case 3: for (const k of Object.keys(t)) if (k === key) delete t[k]; t[key] = v; break;
      }
    }
  }
  const a = JSON.stringify(lazy), b = JSON.stringify(plain);
  if (a !== b) return {step: i, op, path, key, lazy: a, plain: b};
  const ka = targets(lazy).map((p) => Object.keys(at(lazy, p)).join()).join("|");
  const kb = targets(plain).map((p) => Object.keys(at(plain, p)).join()).join("|");
  if (ka !== kb) return {step: i, keys: [ka, kb]};
}
return [JSON.stringify(plain), lazy];`
	for seed := 1; seed <= 6; seed++ {
		out := runLazy(t, strings.Replace(src, "SEED", strconv.Itoa(seed*7919), 1), "")
		if out.Err != nil {
			t.Fatalf("seed %d: %v", seed, out.Err)
		}
		var res []json.RawMessage
		if err := json.Unmarshal(out.Value, &res); err != nil || len(res) != 2 {
			t.Fatalf("seed %d: diverged: %s", seed, out.Value)
		}
		var plain string
		_ = json.Unmarshal(res[0], &plain)
		if plain != string(res[1]) {
			t.Fatalf("seed %d: result %s, plain %s", seed, res[1], plain)
		}
	}
}

// TestHasSpecialByte checks the eight-byte scan against the byte table:
// it may report a word the table would skip, never miss one.
func TestHasSpecialByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			var w uint64
			for i := 7; i >= 0; i-- {
				w = w<<8 | uint64(b[i])
			}
			if !plainByte[c] && !hasSpecialByte(w) {
				t.Fatalf("byte %#x at %d missed", c, pos)
			}
			if plainByte[c] && hasSpecialByte(w) {
				t.Errorf("byte %#x at %d reported (plain word)", c, pos)
			}
		}
	}
}
