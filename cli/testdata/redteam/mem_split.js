// expect: E_MEMORY
const s = "x".repeat(2 ** 26); return s.split("").length
