// expect: E_TIMEOUT|E_MEMORY
let x = 3n; for (;;) x = x * x; return 1
