// Job N of the reuse test: looks for what an earlier job in the same worker
// left behind, then leaves as much as it can for the next job.
// input: {secret: "sk-reuse-…", control: bool}; returns what it found of a
// secret other than its own (with control, of its own, after leaving it:
// the search works).
const SECRET_PREFIX = "sk-" + "reuse-"; // not in this source as one string
let own = input.secret;
const FunctionPrototype = Object.getPrototypeOf(function () {}); // no Function global here
const fnToString = FunctionPrototype.toString;
const hit = v => v.includes(SECRET_PREFIX) && (own === null || !v.includes(own));
const found = [];
const seen = new Set();

// Walk every object reachable from the global object: own properties,
// symbols, getters' values and prototypes.
function walk(root, path) {
  const queue = [[root, path]];
  for (let qi = 0; qi < queue.length && seen.size < 20000; qi++) {
    const [o, p] = queue[qi];
    if (o === null || (typeof o !== "object" && typeof o !== "function") || seen.has(o)) continue;
    seen.add(o);
    if (ArrayBuffer.isView(o)) continue; // its elements are bytes: searched below
    let keys = [];
    try { keys = Reflect.ownKeys(o); } catch (e) { continue; }
    for (const k of keys) {
      const name = typeof k === "symbol" ? String(k) : k;
      if (hit(String(name))) found.push("key " + p + "." + String(name));
      let v;
      try { v = o[k]; } catch (e) { continue; }
      if (typeof v === "string" && hit(v)) found.push(p + "." + String(name));
      if (typeof v === "function") {
        try { const s = fnToString.call(v); if (hit(s)) found.push("source of " + p + "." + String(name)); } catch (e) {}
      }
      queue.push([v, p + "." + String(name)]);
    }
    try { queue.push([Object.getPrototypeOf(o), p + ".__proto__"]); } catch (e) {}
  }
}

function search() {
  walk(globalThis, "globalThis");
  for (const [name, v] of [["[]", []], ["{}", {}], ["''", ""], ["0", 0], ["fn", function () {}], ["err", new Error("x")],
                           ["promise", Promise.resolve()], ["re", /x/], ["date", new Date(0)], ["map", new Map()]]) {
    walk(Object(v), name);
    for (const k in v) if (hit(String(k)) || hit(String(v[k]))) found.push("enumerable " + name + "." + k);
  }
  // Built-ins behave as built-ins: an earlier job's replacements are gone.
  const same = (name, f, want) => { try { if (f() !== want) found.push(name + " replaced"); } catch (e) { found.push(name + " replaced"); } };
  same("Array.prototype.map", () => [1, 2].map(x => x * 2).join(), "2,4");
  same("JSON.stringify", () => JSON.stringify({ a: 1 }), '{"a":1}');
  same("Object.prototype.toString", () => Object.prototype.toString.call([]), "[object Array]");
  same("String.prototype.toUpperCase", () => "abc".toUpperCase(), "ABC");
  // Fresh memory holds nothing of an earlier job's buffers.
  const buf = new Uint8Array(4 << 20);
  for (const c of "sk-reuse") if (buf.indexOf(c.charCodeAt(0)) >= 0) found.push("a fresh buffer holds " + c);
  try { throw new Error("probe"); } catch (e) { if (hit(String(e.stack))) found.push("error stack"); }
}

search();

// Leave everything a program can leave.
const s = input.secret;
globalThis.leakGlobal = s;
Object.prototype.leakObject = s;
Array.prototype.leakArray = s;
FunctionPrototype.leakFunction = s;
String.prototype.leakString = function () { return s; };
Error.prototype.leakError = s;
Promise.prototype.leakPromise = s;
Object.defineProperty(globalThis, "leakHidden", { value: s, enumerable: false });
globalThis[Symbol("leakSymbol")] = s;
JSON.leakJSON = s;
Math.leakMath = s;
tools.leakTools = s;
console.leakConsole = s;
Array.prototype.map = function () { return s; };
JSON.stringify = function () { return s; };
String.prototype.toUpperCase = function () { return s; };
globalThis.eval = s;
var leakVar = s;
const big = new Uint8Array(4 << 20);
const bytes = Array.from(s, c => c.charCodeAt(0));
for (let i = 0; i + bytes.length < big.length; i += bytes.length) big.set(bytes, i);
const strs = [];
for (let i = 0; i < 50; i++) strs.push(s + i);
globalThis.keepBig = big;
globalThis.keepStrs = strs;
if (input.control) {
  own = null;
  found.length = 0;
  seen.clear();
  search();
}
return found;
