// expect: ok:[0,"E_RESULT_INVALID"]
let ran = 0; const h = { get() { ran++; progress(9); return 1 }, ownKeys() { ran++; return ["a"] }, getOwnPropertyDescriptor() { ran++; return { value: 1, enumerable: true, configurable: true } }, getPrototypeOf() { ran++; return null } }
try { progress([new Proxy({}, h)]) } catch (e) { return [ran, e.code] } return ran
