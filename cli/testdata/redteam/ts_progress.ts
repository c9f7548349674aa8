// expect: ok:{"done":3}
interface P { done: number }
let p: P = { done: 0 }
for (let i = 0; i < 3; i++) { p = { done: i + 1 }; progress(p satisfies P) }
return p
