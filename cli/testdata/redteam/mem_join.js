// expect: E_MEMORY
const a = new Array(2 ** 24).fill("0123456789abcdef"); return a.join("").length
