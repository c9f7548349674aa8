// expect: E_STACK
const f = n => f(n + 1) + 1; return f(0)
