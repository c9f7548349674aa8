// expect: ok:["E_TOOL_ARGS","E_TOOL_ARGS","E_TOOL_ARGS","E_TOOL_ARGS","E_TOOL_ARGS","E_TOOL_ARGS","E_TOOL_ARGS","E_TOOL_UNKNOWN","E_TOOL_ARGS","E_TOOL_ARGS"]
const out = []
for (const f of [() => tools.$search(), () => tools.$search({}), () => tools.$search("x", -1), () => tools.$search("x", 1e9),
  () => tools.$search(Symbol("s")), () => tools.$search("x".repeat(1 << 20)), () => tools.$search(new Proxy({}, { get() { throw 1 } })),
  () => tools.$describe(["__proto__", "constructor", "../../etc/passwd"]), () => tools.$describe(new Array(100000).fill("get_expenses")),
  () => tools.$describe(new Proxy([], { get() { throw 1 } }))]) {
  try { await f(); out.push("ok") } catch (e) { out.push(e && e.code || String(e)) }
}
return out
