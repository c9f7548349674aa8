// expect: ok:0
let ran = 0; Object.defineProperty(Array.prototype, 1, { get() { ran++; return 5 }, configurable: true }); Object.defineProperty(Object.prototype, "y", { get() { ran++; return 5 }, enumerable: true })
progress([0, , 2]); progress({ a: 1 }); return ran
