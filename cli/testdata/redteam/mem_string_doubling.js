// expect: E_MEMORY
let s = "ab"; for (;;) { s = s + s; s.charCodeAt(s.length - 1) }
