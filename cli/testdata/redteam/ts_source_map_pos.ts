// expect: E_GUEST_ERROR
type T = { a: string }
const s = `😀

é`; const x: T = { a: s }
const é: string = "😀😀"; /* 😀 */ throw new Error(é + x.a.length)
