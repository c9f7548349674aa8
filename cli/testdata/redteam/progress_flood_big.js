// expect: E_TIMEOUT
const v = "x".repeat(250000); for (;;) progress(v)
