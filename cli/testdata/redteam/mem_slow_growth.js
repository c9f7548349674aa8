// expect: E_MEMORY|E_TIMEOUT
const keep = []; for (;;) keep.push(new Array(1 << 16).fill(keep.length))
