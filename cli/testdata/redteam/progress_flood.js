// expect: E_TIMEOUT
let i = 0; for (;;) progress({ i: i++ })
