// expect: E_MEMORY
const keep = []; for (let i = 0; ; i++) keep.push("x".repeat(1 << 20) + i)
